package main

import (
	"bufio"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"
)

// The worked example of contract section 14.6: the key whose seed is the bytes 0..31 signs the
// genuine result and the supervisor's correction; the forged events carry other signatures.
func TestSignaturesAreThoseOfTheContractsWorkedExample(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	key := ed25519.NewKeyFromSeed(seed)
	var keys struct {
		Tables map[string][]string `json:"tables"`
	}
	raw, err := os.ReadFile("../../docs/examples/signed-keys.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	public := base64.RawURLEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
	if keys.Tables["sicbo-7"][0] != public {
		t.Fatalf("public key %s, the example lists %v", public, keys.Tables["sicbo-7"])
	}
	f, err := os.Open("../../docs/examples/signed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	genuine := map[string]bool{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		var e event
		if err := json.Unmarshal(lines.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if !signs(e.Type) || e.Sig == "" {
			continue
		}
		ours := sign(key, e)
		if len(ours) != 86 {
			t.Fatalf("%s: sig of %d characters", e.EventID, len(ours))
		}
		if ours == e.Sig {
			genuine[e.EventID+" "+e.AuthorizedBy] = true
		}
	}
	want := map[string]bool{"S1-result ": true, "S1-fix supervisor.ana": true}
	if len(genuine) != len(want) || !genuine["S1-result "] || !genuine["S1-fix supervisor.ana"] {
		t.Fatalf("signed as in the example: %v, want %v", genuine, want)
	}
}

func TestTheMessageOfAResultIsTheContractsExample(t *testing.T) {
	e := event{Type: "round.result", V: 1, EventID: "S1-result", TableID: "sicbo-7", RoundID: "S1", At: "2026-12-01T14:00:30Z", Dice: []int{6, 5, 1}}
	want := "round.result\n1\nS1-result\nsicbo-7\nS1\n2026-12-01T14:00:30Z\n6-5-1\n\n"
	if got := string(signedMessage(e)); got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}
