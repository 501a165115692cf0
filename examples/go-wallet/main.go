// Command go-wallet is a wallet in Go (franz-go): in a consumer group (wallet-<name>), it reads
// croupier's settlements, refunds and adjustments read_committed and credits each record once,
// by its id, to balances kept in an append-only file synced to disk, with the positions after
// each batch in the same line. At a (re)assignment it reads from the file's positions; the
// offsets it commits to the group after each batch are advice for the group's lag.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"example.com/croupier/examples/kafkaconn"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "go-wallet:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var (
		conn                     kafkaconn.Connection
		group, storePath, topics string
		instance                 string
		balancesOnly             bool
		maxRecords               int
		pause                    time.Duration
	)
	fs := flag.NewFlagSet("go-wallet", flag.ContinueOnError)
	conn.Register(fs)
	fs.StringVar(&group, "group", "wallet-go", "consumer group (a secured broker allows the wallet role wallet-*)")
	fs.StringVar(&instance, "instance", "", "static member id (group.instance.id): a restarted process takes its partitions back at once, not after the session timeout")
	fs.StringVar(&topics, "topics", "settlements,refunds,adjustments", "the topics of settlements, refunds and adjustments")
	fs.StringVar(&storePath, "store", "wallet.jsonl", "the credit store: an append-only file")
	fs.BoolVar(&balancesOnly, "balances", false, "print the store's balances as JSON and exit")
	fs.IntVar(&maxRecords, "batch", 500, "records per batch (one line of the store, one sync)")
	fs.DurationVar(&pause, "pause", 0, "wait this long after each batch (to watch it work, or to stop it mid-stream)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := openStore(storePath, !balancesOnly)
	if err != nil {
		return err
	}
	defer s.close()
	if balancesOnly {
		return printBalances(s)
	}
	opts, err := conn.Options()
	if err != nil {
		return err
	}
	opts = append(opts,
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(strings.Split(topics, ",")...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		// croupier writes in transactions: each ends with a commit marker. Reading the markers
		// too lets the positions (and the group's offsets) move past them, so that the group's
		// lag reads 0 once every record is credited.
		kgo.KeepControlRecords(),
		kgo.BlockRebalanceOnPoll(),
		kgo.AdjustFetchOffsetsFn(func(_ context.Context, given map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
			for topic, partitions := range given {
				for p := range partitions {
					if next, ok := s.positions[position(topic, p)]; ok {
						partitions[p] = kgo.NewOffset().At(next).WithEpoch(-1)
					}
				}
			}
			return given, nil
		}),
	)
	if instance != "" {
		opts = append(opts, kgo.InstanceID(instance))
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for ctx.Err() == nil {
		fetches := client.PollRecords(ctx, maxRecords)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			client.AllowRebalance() // else Close waits for the rebalance this poll blocks
			break
		}
		for _, e := range fetches.Errors() {
			fmt.Fprintf(os.Stderr, "go-wallet: fetch %s/%d: %v\n", e.Topic, e.Partition, e.Err)
		}
		if err := creditBatch(ctx, client, s, fetches.Records()); err != nil {
			client.AllowRebalance()
			return err
		}
		client.AllowRebalance()
		if pause > 0 && len(fetches.Records()) > 0 {
			time.Sleep(pause)
		}
	}
	return nil
}

// creditBatch credits the records not credited before, stores them with the positions after
// them, then commits those positions to the group.
func creditBatch(ctx context.Context, client *kgo.Client, s *store, records []*kgo.Record) error {
	if len(records) == 0 {
		return nil
	}
	b, err := newCredits(s, records)
	if err != nil {
		return err
	}
	if err := s.commit(b); err != nil {
		return err
	}
	if err := client.CommitRecords(ctx, records...); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "go-wallet: commit to the group (advice only):", err)
	}
	return nil
}

// newCredits is the batch of these records: the movements whose id the store has not credited
// (a record read again changes nothing), and the position after each partition's last record,
// commit markers included.
func newCredits(s *store, records []*kgo.Record) (batch, error) {
	b := batch{Positions: map[string]int64{}}
	seen := map[string]bool{}
	for _, r := range records {
		b.Positions[position(r.Topic, r.Partition)] = r.Offset + 1
		if r.Attrs.IsControl() {
			continue
		}
		c, err := creditOf(r.Value)
		if err != nil {
			return batch{}, fmt.Errorf("%s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
		}
		if !s.credited[c.ID] && !seen[c.ID] {
			seen[c.ID] = true
			b.Credits = append(b.Credits, c)
		}
	}
	return b, nil
}

// creditOf is the movement of a settlement, a refund or an adjustment (contract section 7).
func creditOf(value []byte) (credit, error) {
	var r struct {
		Type         string `json:"type"`
		SettlementID string `json:"settlement_id"`
		RefundID     string `json:"refund_id"`
		AdjustmentID string `json:"adjustment_id"`
		PlayerID     string `json:"player_id"`
		Currency     string `json:"currency"`
		Payout       int64  `json:"payout"`
		Amount       int64  `json:"amount"`
		Delta        int64  `json:"delta"`
	}
	if err := json.Unmarshal(value, &r); err != nil {
		return credit{}, err
	}
	c := credit{PlayerID: r.PlayerID, Currency: r.Currency}
	switch r.Type {
	case "settlement":
		c.ID, c.Amount = r.SettlementID, r.Payout
	case "refund":
		c.ID, c.Amount = r.RefundID, r.Amount
	case "adjustment":
		c.ID, c.Amount = r.AdjustmentID, r.Delta
	default:
		return credit{}, fmt.Errorf("not a settlement, refund or adjustment: type %q", r.Type)
	}
	if c.ID == "" || c.PlayerID == "" || c.Currency == "" {
		return credit{}, fmt.Errorf("%s without its id, player_id or currency", r.Type)
	}
	return c, nil
}

func position(topic string, partition int32) string {
	return topic + "/" + strconv.Itoa(int(partition))
}

func printBalances(s *store) error {
	out, err := json.Marshal(struct {
		Credited int                         `json:"credited"`
		Balances map[string]map[string]int64 `json:"balances"`
	}{len(s.credited), s.balances})
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}
