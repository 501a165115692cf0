package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestALineCutShortByACrashCountsForNothingAndIsCutOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wallet.jsonl")
	s, err := openStore(path, true)
	if err != nil {
		t.Fatal(err)
	}
	first := batch{Credits: []credit{{"settlement:b1", "alice", "EUR", 1000}}, Positions: map[string]int64{"settlements/0": 3}}
	if err := s.commit(first); err != nil {
		t.Fatal(err)
	}
	s.close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"credits":[{"id":"refund:b2","player_id":"alice","currency":"EUR","amount":5`)
	f.Close()

	read, err := openStore(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read.balances, map[string]map[string]int64{"alice": {"EUR": 1000}}) || read.positions["settlements/0"] != 3 {
		t.Fatalf("read-only: balances %v, positions %v", read.balances, read.positions)
	}
	read.close()
	s, err = openStore(path, true)
	if err != nil {
		t.Fatal(err)
	}
	second := batch{Credits: []credit{{"adjustment:1:b1", "alice", "EUR", -1000}}, Positions: map[string]int64{"adjustments/1": 1}}
	if err := s.commit(second); err != nil {
		t.Fatal(err)
	}
	s.close()
	again, err := openStore(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer again.close()
	if got := again.balances["alice"]["EUR"]; got != 0 || len(again.credited) != 2 || len(again.positions) != 2 {
		t.Fatalf("after the cut and a new line: alice %d, credited %v, positions %v", got, again.credited, again.positions)
	}
}

func TestEachRecordTypeMovesItsOwnAmountUnderItsOwnId(t *testing.T) {
	cases := map[string]credit{
		`{"type":"settlement","settlement_id":"settlement:b1","player_id":"p","currency":"EUR","payout":18100}`:   {"settlement:b1", "p", "EUR", 18100},
		`{"type":"refund","refund_id":"refund:b2","player_id":"p","currency":"EUR","amount":500}`:                 {"refund:b2", "p", "EUR", 500},
		`{"type":"adjustment","adjustment_id":"adjustment:2:b1","player_id":"p","currency":"EUR","delta":-18100}`: {"adjustment:2:b1", "p", "EUR", -18100},
		// the largest payout, 181 times the largest stake, is exact as int64 (not as a double)
		`{"type":"settlement","settlement_id":"settlement:b3","player_id":"p","currency":"EUR","payout":1630303065108119371}`: {"settlement:b3", "p", "EUR", 1630303065108119371},
	}
	for raw, want := range cases {
		got, err := creditOf([]byte(raw))
		if err != nil || got != want {
			t.Fatalf("%s: %v %v, want %v", raw, got, err, want)
		}
	}
	if _, err := creditOf([]byte(`{"type":"rejected","reason":"malformed"}`)); err == nil {
		t.Fatal("a rejection is not a movement")
	}
}

func TestARecordReadAgainChangesNothing(t *testing.T) {
	s, err := openStore(filepath.Join(t.TempDir(), "wallet.jsonl"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	settlement := []byte(`{"type":"settlement","settlement_id":"settlement:b1","player_id":"alice","currency":"EUR","payout":1000}`)
	refund := []byte(`{"type":"refund","refund_id":"refund:b2","player_id":"bob","currency":"EUR","amount":300}`)
	first := []*kgo.Record{
		{Topic: "settlements", Partition: 1, Offset: 4, Value: settlement},
		{Topic: "settlements", Partition: 1, Offset: 5, Value: settlement}, // a repeat within a batch
	}
	b, err := newCredits(s, first)
	if err != nil || len(b.Credits) != 1 || b.Positions["settlements/1"] != 6 {
		t.Fatalf("first batch: %+v %v", b, err)
	}
	if err := s.commit(b); err != nil {
		t.Fatal(err)
	}
	// read again after a restart that lost the group's commit, with a new refund and a marker
	again := []*kgo.Record{
		{Topic: "settlements", Partition: 1, Offset: 4, Value: settlement},
		{Topic: "refunds", Partition: 0, Offset: 9, Value: refund},
		{Topic: "refunds", Partition: 0, Offset: 10, Attrs: kgo.NewRecordAttrs(kgo.RecordAttrsOpts{Transactional: true, Control: true})},
	}
	b, err = newCredits(s, again)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Credits) != 1 || b.Credits[0].ID != "refund:b2" || b.Positions["refunds/0"] != 11 {
		t.Fatalf("second batch: %+v", b)
	}
	if err := s.commit(b); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int64{"alice": {"EUR": 1000}, "bob": {"EUR": 300}}
	if !reflect.DeepEqual(s.balances, want) {
		t.Fatalf("balances %v, want %v", s.balances, want)
	}
}
