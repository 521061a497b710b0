package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/logreplay"
	"github.com/drover-sched/drover/serve/remote"
)

// runRemote runs the simulation of opts under the remote policy rem; with
// dir set it records the nodes' telemetry there (datasets/telemlog) and
// writes the run manifest m (completed with the telemetry step).
func runRemote(rem *remote.Remote, opts trace.Options, dir string, m logreplay.Manifest) (*trace.Result, error) {
	if dir == "" {
		res, _, err := logreplay.RunRecorded(opts, rem, nil, m.Epoch)
		return res, err
	}
	tw, err := telemlog.NewWriter(filepath.Join(dir, logreplay.TelemetryDir), telemlog.Options{SealInterval: -1})
	if err != nil {
		return nil, err
	}
	res, step, err := logreplay.RunRecorded(opts, rem, tw, m.Epoch)
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	m.TelemetryStep, m.TelemetryDir = step, logreplay.TelemetryDir
	b, err := m.Encode()
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, logreplay.ManifestFile), func(f io.Writer) error {
		_, err := f.Write(b)
		return err
	}); err != nil {
		return nil, err
	}
	return res, nil
}

// dialServer connects to a drover server: insecure unless caFile is set
// (then TLS verified against it), with the bearer token of tokenFile on
// every call when set.
func dialServer(addr, tokenFile, caFile string) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if caFile != "" {
		pem, err := inputfile.ReadFile(caFile, inputfile.Secret)
		if err != nil {
			return nil, err
		}
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: x509.NewCertPool()}
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificates", caFile)
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if tokenFile != "" {
		b, err := inputfile.ReadText(tokenFile, inputfile.Secret)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithPerRPCCredentials(serve.BearerToken{Token: strings.TrimSpace(string(b)), AllowInsecure: caFile == ""}))
	}
	return grpc.NewClient(addr, opts...)
}
