package main

// event is one round or bet event (contract section 3), its fields in the contract's order; a
// field a type has not is left out.
type event struct {
	Type         string `json:"type"`
	V            int    `json:"v"`
	EventID      string `json:"event_id"`
	TableID      string `json:"table_id"`
	RoundID      string `json:"round_id"`
	At           string `json:"at"`
	Game         string `json:"game,omitempty"`
	DealerID     string `json:"dealer_id,omitempty"`
	ShakerID     string `json:"shaker_id,omitempty"`
	LastSeq      *int   `json:"last_seq,omitempty"`
	Dice         []int  `json:"dice,omitempty"`
	Reason       string `json:"reason,omitempty"`
	AuthorizedBy string `json:"authorized_by,omitempty"`
	BetID        string `json:"bet_id,omitempty"`
	PlayerID     string `json:"player_id,omitempty"`
	Seq          int    `json:"seq,omitempty"`
	Kind         string `json:"kind,omitempty"`
	Pick         []int  `json:"pick,omitempty"`
	Stake        int64  `json:"stake,omitempty"`
	Currency     string `json:"currency,omitempty"`
	Sig          string `json:"sig,omitempty"`
}
