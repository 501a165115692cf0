package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// signedMessage is what a table signs for a money-moving round event (contract section 3,
// "Signed round events"): type, v, event_id, table_id, round_id, at, the outcome, reason and
// authorized_by joined by line feeds; a value the type has not is empty.
func signedMessage(e event) []byte {
	outcome, reason, authorizedBy := "", "", ""
	switch e.Type {
	case "round.result":
		outcome = diceText(e.Dice)
	case "round.corrected":
		outcome, reason, authorizedBy = diceText(e.Dice), e.Reason, e.AuthorizedBy
	case "round.voided":
		reason, authorizedBy = e.Reason, e.AuthorizedBy
	case "round.cancelled":
		reason = e.Reason
	}
	values := []string{
		e.Type, strconv.Itoa(e.V), e.EventID, e.TableID, e.RoundID, e.At, outcome, reason, authorizedBy,
	}
	return []byte(strings.Join(values, "\n"))
}

// signs tells whether an event of this type carries a sig.
func signs(kind string) bool {
	switch kind {
	case "round.result", "round.corrected", "round.voided", "round.cancelled":
		return true
	}
	return false
}

// diceText is the outcome of dice as signed: their digits joined by "-" in order (6-5-1).
func diceText(dice []int) string {
	parts := make([]string, len(dice))
	for i, d := range dice {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, "-")
}

// sign is the sig of an event: Ed25519 of its message, base64url without padding (86 characters).
func sign(key ed25519.PrivateKey, e event) string {
	return base64.RawURLEncoding.EncodeToString(ed25519.Sign(key, signedMessage(e)))
}

// privateKeyFile is the file `croupier keys new TABLE` writes.
type privateKeyFile struct {
	TableID    string `json:"table_id"`
	PrivateKey string `json:"private_key"`
	PublicKey  string `json:"public_key"`
}

// readKey reads a private key file, checking that its public key is that of its seed.
func readKey(path string) (string, ed25519.PrivateKey, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	var f privateKeyFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	seed, err := base64.RawURLEncoding.DecodeString(f.PrivateKey)
	if err != nil || len(seed) != ed25519.SeedSize {
		return "", nil, fmt.Errorf("%s: private_key is not 32 bytes of base64url", path)
	}
	key := ed25519.NewKeyFromSeed(seed)
	public := base64.RawURLEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
	if public != f.PublicKey {
		return "", nil, fmt.Errorf("%s: public_key is not that of private_key", path)
	}
	return f.TableID, key, nil
}
