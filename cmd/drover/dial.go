package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/serve"
)

// clientFlags are the flags of a drover server's clients (drover place,
// drover agent): the bearer token and the client side of TLS and mTLS.
type clientFlags struct {
	tokenFile, caFile, certFile, keyFile, serverName *string
}

// addClientFlags defines the client flags on fs.
func addClientFlags(fs *flag.FlagSet) *clientFlags {
	return &clientFlags{
		tokenFile:  fs.String("token-file", "", "file holding the bearer token; without -tls-ca it would travel in plaintext, so it is sent only to a loopback -addr (127.0.0.1, ::1, localhost), with a warning"),
		caFile:     fs.String("tls-ca", "", "CA (PEM) of the server's certificate; turns TLS on"),
		certFile:   fs.String("tls-cert", "", "client certificate (PEM), for mTLS"),
		keyFile:    fs.String("tls-key", "", "client key (PEM), for mTLS"),
		serverName: fs.String("tls-server-name", "", "server name to verify (default: the address's host)"),
	}
}

// dialOptions returns the gRPC dial options the flags ask for: TLS when
// -tls-ca is given (plaintext otherwise), and the bearer token, which is
// sent over plaintext too (for loopback use).
func (c *clientFlags) dialOptions() ([]grpc.DialOption, error) {
	cfg, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if cfg != nil {
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	tok, err := c.token()
	if err != nil {
		return nil, err
	}
	if tok != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(serve.BearerToken{Token: tok, AllowInsecure: cfg == nil}))
	}
	return opts, nil
}

// tlsConfig returns the client's TLS configuration, or nil without
// -tls-ca (plaintext).
func (c *clientFlags) tlsConfig() (*tls.Config, error) {
	if *c.caFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: *c.serverName}
	pem, err := inputfile.ReadFile(*c.caFile, inputfile.Secret)
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = x509.NewCertPool()
	if !cfg.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificates", *c.caFile)
	}
	if *c.certFile != "" {
		cert, err := inputfile.LoadX509KeyPair(*c.certFile, *c.keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// token returns the bearer token of -token-file ("" without one).
func (c *clientFlags) token() (string, error) {
	if *c.tokenFile == "" {
		return "", nil
	}
	b, err := inputfile.ReadText(*c.tokenFile, inputfile.Secret)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// checkToken refuses to send the bearer token in plaintext (no -tls-ca)
// to an address off loopback, and warns on w when it is sent in
// plaintext to loopback.
func (c *clientFlags) checkToken(addr string, w io.Writer) error {
	if *c.tokenFile == "" || *c.caFile != "" {
		return nil
	}
	if !serve.LoopbackAddr(addr) {
		return fmt.Errorf("-token-file without -tls-ca would send the bearer token in plaintext to %s: add -tls-ca (the server's -tls-cert), or reach the server on loopback", addr)
	}
	fmt.Fprintf(w, "warning: -token-file without -tls-ca: the token travels in plaintext (to loopback %s only)\n", addr)
	return nil
}
