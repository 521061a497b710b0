// Package testpki makes a throw-away public-key infrastructure for tests
// of Drover's TLS and mutual-TLS front ends: a certificate authority, a
// server certificate for 127.0.0.1 and localhost, and a client certificate,
// all signed by the authority, written as PEM files into a directory. Keys
// are ECDSA P-256 from crypto/rand and certificates last one hour, so
// nothing it makes is fit for anything but a test.
//
// # Usage
//
//	pki, err := testpki.Write(t.TempDir())
//	if err != nil {
//		t.Fatal(err)
//	}
//	// Serve with pki.ServerCert, pki.ServerKey and (for mTLS) pki.CA as
//	// the client CA; dial with pki.ClientTLS().
package testpki
