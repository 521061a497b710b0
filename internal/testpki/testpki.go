package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI names the PEM files Write made and holds the parsed authority.
type PKI struct {
	// CA is the authority's certificate (the trust root of both sides).
	CA string
	// ServerCert and ServerKey are the server's certificate (for
	// 127.0.0.1, ::1 and localhost) and key.
	ServerCert, ServerKey string
	// ClientCert and ClientKey are a client's certificate and key.
	ClientCert, ClientKey string

	pool   *x509.CertPool
	client tls.Certificate
}

// Write makes the authority and the two certificates and writes them as
// PEM files into dir.
func Write(dir string) (*PKI, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "drover test CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p := &PKI{CA: filepath.Join(dir, "ca.pem"), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	if err := writePEM(p.CA, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, server bool) (certFile, keyFile string, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", "", err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    now.Add(-time.Minute),
			NotAfter:     now.Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return "", "", err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return "", "", err
		}
		certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
			return "", "", err
		}
		return certFile, keyFile, writePEM(keyFile, "EC PRIVATE KEY", kder)
	}
	if p.ServerCert, p.ServerKey, err = leaf(2, "server", x509.ExtKeyUsageServerAuth, true); err != nil {
		return nil, err
	}
	if p.ClientCert, p.ClientKey, err = leaf(3, "client", x509.ExtKeyUsageClientAuth, false); err != nil {
		return nil, err
	}
	if p.client, err = tls.LoadX509KeyPair(p.ClientCert, p.ClientKey); err != nil {
		return nil, fmt.Errorf("testpki: %w", err)
	}
	return p, nil
}

// ClientTLS returns a client configuration that trusts the authority and,
// with withCert, presents the client certificate.
func (p *PKI) ClientTLS(withCert bool) *tls.Config {
	cfg := &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
	if withCert {
		cfg.Certificates = []tls.Certificate{p.client}
	}
	return cfg
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
