package inputfile

import "crypto/tls"

// LoadX509KeyPair is tls.LoadX509KeyPair with the two PEM files read by
// ReadFile (limit Secret), so that a certificate or key path of a device
// or a FIFO is refused like any other input.
func LoadX509KeyPair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := ReadFile(certFile, Secret)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ReadFile(keyFile, Secret)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}
