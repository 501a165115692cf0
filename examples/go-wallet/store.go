package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// credit is one movement of a player's balance, named by the id of the record that made it
// (settlement_id, refund_id or adjustment_id: contract section 10).
type credit struct {
	ID       string `json:"id"`
	PlayerID string `json:"player_id"`
	Currency string `json:"currency"`
	Amount   int64  `json:"amount"`
}

// batch is one line of the store: the credits of one poll and the positions after it, written
// together and synced, so that the positions never run ahead of the credits nor behind them.
type batch struct {
	Credits   []credit         `json:"credits"`
	Positions map[string]int64 `json:"positions"`
}

// store is an append-only JSON Lines file of batches, and what it adds up to.
type store struct {
	file      *os.File
	credited  map[string]bool
	balances  map[string]map[string]int64
	positions map[string]int64 // "topic/partition" -> the next offset to read
}

// openStore reads the store at path (created if missing). A last line cut short by a crash
// counts for nothing: its batch was never synced whole, so neither its credits nor its positions
// count. A writable store cuts it off; a read-only one (the balances, while a wallet runs) reads
// up to it.
func openStore(path string, writable bool) (*store, error) {
	flags := os.O_RDONLY
	if writable {
		flags = os.O_RDWR | os.O_CREATE
	}
	s := &store{credited: map[string]bool{}, balances: map[string]map[string]int64{}, positions: map[string]int64{}}
	f, err := os.OpenFile(path, flags, 0o600)
	if !writable && errors.Is(err, fs.ErrNotExist) {
		return s, nil // nothing credited yet
	}
	if err != nil {
		return nil, err
	}
	s.file = f
	reader := bufio.NewReader(f)
	var kept int64
	for {
		line, err := reader.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		var b batch
		if json.Unmarshal(bytes.TrimSpace(line), &b) != nil {
			break
		}
		s.apply(b)
		kept += int64(len(line))
	}
	if !writable {
		return s, nil
	}
	if err := f.Truncate(kept); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(kept, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func (s *store) apply(b batch) {
	for _, c := range b.Credits {
		s.credited[c.ID] = true
		if s.balances[c.PlayerID] == nil {
			s.balances[c.PlayerID] = map[string]int64{}
		}
		s.balances[c.PlayerID][c.Currency] += c.Amount
	}
	for p, offset := range b.Positions {
		s.positions[p] = offset
	}
}

// commit appends a batch and syncs it to disk before it counts.
func (s *store) commit(b batch) error {
	line, err := json.Marshal(b)
	if err != nil {
		return err
	}
	if _, err := s.file.Write(append(line, '\n')); err != nil {
		return err
	}
	if err := s.file.Sync(); err != nil {
		return err
	}
	s.apply(b)
	return nil
}

func (s *store) close() error {
	if s.file == nil {
		return nil
	}
	return s.file.Close()
}
