// Package kafkaconn holds the broker flags the Go examples share: a plain broker, or
// SASL/SCRAM-SHA-512 over TLS (the secured one).
package kafkaconn

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Connection holds the broker flags.
type Connection struct {
	bootstrap, caFile, user, passwordFile string
}

// Register adds -bootstrap, -ca-file, -user and -password-file to a flag set.
func (c *Connection) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.bootstrap, "bootstrap", "127.0.0.1:9092", "Kafka bootstrap servers, comma-separated")
	fs.StringVar(&c.caFile, "ca-file", "", "PEM CA certificate of the broker: connects over TLS")
	fs.StringVar(&c.user, "user", "", "SASL/SCRAM-SHA-512 user (with -password-file)")
	fs.StringVar(&c.passwordFile, "password-file", "", "file holding the SASL/SCRAM-SHA-512 password")
}

// Options are the client options of these flags.
func (c *Connection) Options() ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(c.bootstrap, ",")...)}
	if c.caFile != "" {
		pem, err := os.ReadFile(c.caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate", c.caFile)
		}
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	if c.user != "" {
		raw, err := os.ReadFile(c.passwordFile)
		if err != nil {
			return nil, fmt.Errorf("-password-file: %w", err)
		}
		auth := scram.Auth{User: c.user, Pass: strings.TrimRight(string(raw), "\r\n")}
		opts = append(opts, kgo.SASL(auth.AsSha512Mechanism()))
	}
	return opts, nil
}
