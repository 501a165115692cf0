// Command go-publisher is a table's game service in Go (franz-go): it publishes the rounds of one
// Sic Bo table and their confirmed bets to croupier's input topics, keyed by table_id (franz-go's
// default partitioner hashes keys with murmur2, as the Java client does), acks=all and
// idempotent, and signs the money-moving round events with the table's Ed25519 key.
package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"example.com/croupier/examples/kafkaconn"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "go-publisher:", err)
		os.Exit(1)
	}
}

type config struct {
	conn                     kafkaconn.Connection
	roundsTopic, betsTopic   string
	table, keyFile, sentFile string
	dealer, shaker           string
	rounds, bets             int
	seed                     uint64
}

func run(args []string) error {
	var c config
	fs := flag.NewFlagSet("go-publisher", flag.ContinueOnError)
	c.conn.Register(fs)
	fs.StringVar(&c.roundsTopic, "rounds-topic", "rounds", "topic of round events")
	fs.StringVar(&c.betsTopic, "bets-topic", "bets", "topic of bet events")
	fs.StringVar(&c.table, "table", "", "table id (required)")
	fs.StringVar(&c.keyFile, "key", "", "the table's private key file (croupier keys new): signs results, corrections, voids, cancellations")
	fs.StringVar(&c.sentFile, "sent", "", "also write every event sent, as JSON Lines, to this file")
	fs.StringVar(&c.dealer, "dealer", "", "dealer_id of every round.opened (optional)")
	fs.StringVar(&c.shaker, "shaker", "", "shaker_id of every round.opened (optional)")
	fs.IntVar(&c.rounds, "rounds", 20, "rounds to publish")
	fs.IntVar(&c.bets, "bets", 6, "bets per round")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the bets and dice (the same seed, the same events)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.table == "" {
		return fmt.Errorf("-table is required")
	}
	var key ed25519.PrivateKey
	if c.keyFile != "" {
		table, k, err := readKey(c.keyFile)
		if err != nil {
			return err
		}
		if table != c.table {
			return fmt.Errorf("%s is the key of table %q, not %q", c.keyFile, table, c.table)
		}
		key = k
	}
	events := table(c, key)
	opts, err := c.conn.Options()
	if err != nil {
		return err
	}
	opts = append(opts,
		kgo.RequiredAcks(kgo.AllISRAcks()), // with idempotence, franz-go's default
		kgo.ProducerLinger(5*time.Millisecond),
		// franz-go compresses with snappy by default; croupier's audit tools (croupier verify,
		// report) read the input topics with kafka-python, which reads gzip alone unless more
		// libraries are installed: gzip, or none as the Java client's default.
		kgo.ProducerBatchCompression(kgo.GzipCompression()),
	)
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	sent, err := publish(client, c, events)
	if err != nil {
		return err
	}
	if c.sentFile != "" {
		if err := writeLines(c.sentFile, sent); err != nil {
			return err
		}
	}
	signed := 0
	for _, e := range events {
		if e.Sig != "" {
			signed++
		}
	}
	fmt.Printf("{\"table_id\":%q,\"events\":%d,\"signed\":%d}\n", c.table, len(events), signed)
	return nil
}

// publish sends every event keyed by its table, in order, and waits for all to be acknowledged.
func publish(client *kgo.Client, c config, events []event) ([][]byte, error) {
	var (
		mu    sync.Mutex
		first error
	)
	sent := make([][]byte, 0, len(events))
	for _, e := range events {
		value, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		topic := c.roundsTopic
		if e.Type == "bet.placed" {
			topic = c.betsTopic
		}
		record := &kgo.Record{Topic: topic, Key: []byte(e.TableID), Value: value}
		client.Produce(context.Background(), record, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
		sent = append(sent, value)
	}
	if err := client.Flush(context.Background()); err != nil {
		return nil, err
	}
	return sent, first
}

// table is the events of c.rounds rounds of one table, deterministic for a seed: each round opened,
// its bets, betting closed and a result; every 7th round cancelled instead, every 5th corrected
// after its result, every 9th voided after it.
func table(c config, key ed25519.PrivateKey) []event {
	h := fnv.New64a()
	h.Write([]byte(c.table))
	random := rand.New(rand.NewPCG(c.seed, h.Sum64()))
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var out []event
	add := func(e event) {
		e.V, e.TableID = 1, c.table
		if key != nil && signs(e.Type) {
			e.Sig = sign(key, e)
		}
		out = append(out, e)
	}
	for r := 1; r <= c.rounds; r++ {
		round := fmt.Sprintf("%s-r%d", c.table, r)
		at := func(second int) string {
			return start.Add(time.Duration(r)*time.Minute + time.Duration(second)*time.Second).Format(time.RFC3339)
		}
		add(event{Type: "round.opened", EventID: round + "-open", RoundID: round, At: at(0), Game: "sicbo", DealerID: c.dealer, ShakerID: c.shaker})
		for seq := 1; seq <= c.bets; seq++ {
			kind, pick := bet(random)
			add(event{
				Type: "bet.placed", EventID: fmt.Sprintf("%s-e%d", round, seq), RoundID: round, At: at(1 + seq%20),
				BetID: fmt.Sprintf("%s-b%d", round, seq), PlayerID: fmt.Sprintf("player-%d", 1+random.IntN(6)),
				Seq: seq, Kind: kind, Pick: pick, Stake: int64(100 * (1 + random.IntN(50))), Currency: "EUR",
			})
		}
		last := c.bets
		add(event{Type: "round.betting_closed", EventID: round + "-close", RoundID: round, At: at(25), LastSeq: &last})
		if r%7 == 0 {
			add(event{Type: "round.cancelled", EventID: round + "-cancel", RoundID: round, At: at(30), Reason: "shaker jammed"})
			continue
		}
		result := dice(random)
		add(event{Type: "round.result", EventID: round + "-result", RoundID: round, At: at(30), Dice: result})
		if r%5 == 0 { // a correction changes the outcome (to the same one, it is invalid_transition)
			fixed := []int{result[0]%6 + 1, result[1], result[2]}
			add(event{Type: "round.corrected", EventID: round + "-fix", RoundID: round, At: at(45), Dice: fixed, Reason: "dealer misread a die", AuthorizedBy: "supervisor.ana"})
		}
		if r%9 == 0 {
			add(event{Type: "round.voided", EventID: round + "-void", RoundID: round, At: at(50), Reason: "dice set found faulty", AuthorizedBy: "supervisor.ana"})
		}
	}
	return out
}

func dice(random *rand.Rand) []int {
	return []int{1 + random.IntN(6), 1 + random.IntN(6), 1 + random.IntN(6)}
}

// bet is a Sic Bo kind and pick (contract section 8).
func bet(random *rand.Rand) (string, []int) {
	switch random.IntN(6) {
	case 0:
		return "big", nil
	case 1:
		return "small", nil
	case 2:
		return "odd", nil
	case 3:
		return "single", []int{1 + random.IntN(6)}
	case 4:
		return "total", []int{4 + random.IntN(14)}
	default:
		return "triple", []int{1 + random.IntN(6)}
	}
}

func writeLines(path string, lines [][]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, line := range lines {
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
