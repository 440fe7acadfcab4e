// arena_stdio.go: the stdio protocol of Shengji Arena for a Go bot, standard library only.
//
// Copy this file next to your main.go (package main) and call Play with your decide function:
//
//	func main() {
//		Play(func(t *Turn) Action { return t.Actions[0] }) // the first listed action is legal
//	}
//
// Play reads the referee's JSON lines on standard input, keeps what the seat was told (its
// seat, the variant, the latest observation and hint, the events since its previous turn),
// calls decide once per request and writes the answer line, {"request_id": ..., "action":
// {...}}, flushed at once. It logs with the standard log package (standard error: the seat's
// log; standard output carries answers only) and returns at match_end or at the end of input.
// A line it cannot read is logged and skipped. The messages and their fields:
// docs/protocol.md, section 15 (The stdio protocol).
package main

import (
	"bufio"
	"encoding/json"
	"io"
	"log"
	"os"
)

// Action is what a seat does at a decision: Kind is an ActionKind name ("ACTION_KIND_PLAY"),
// Cards the cards shown, buried, played, given or returned; Suit and Take only where a
// decision needs them (three-deck). Copying one of Turn.Actions is always legal.
type Action struct {
	Kind  string   `json:"kind"`
	Cards []string `json:"cards,omitempty"`
	Suit  string   `json:"suit,omitempty"`
	Take  []string `json:"take,omitempty"`
}

// SeatCards: a seat and the cards it showed or played (declarations, the current trick).
type SeatCards struct {
	Seat  int      `json:"seat"`
	Cards []string `json:"cards"`
}

// Observation is the seat's view at a decision (docs/protocol.md, section 6). -1 is "none" in
// its seat fields.
type Observation struct {
	Seat           int         `json:"seat"`
	Variant        string      `json:"variant"`
	Deal           int         `json:"deal"`
	Phase          string      `json:"phase"`
	Levels         []string    `json:"levels"` // [team of seats 0 and 2, team of 1 and 3]
	Dealer         int         `json:"dealer"`
	Level          string      `json:"level"`
	Trump          string      `json:"trump"` // "S" "H" "D" "C", "none", "" (not fixed yet)
	Hand           []string    `json:"hand"`  // weakest first once the trump is fixed
	HandSizes      []int       `json:"hand_sizes"`
	FirstReceiver  int         `json:"first_receiver"`
	CardsDealt     int         `json:"cards_dealt"`
	Declarations   []SeatCards `json:"declarations"`
	PublicKitty    []string    `json:"public_kitty"`
	DrawnKittyCard string      `json:"drawn_kitty_card"`
	MyKitty        []string    `json:"my_kitty"`
	KittyHolder    int         `json:"kitty_holder"`
	Redeals        int         `json:"redeals"`
	TrickLeader    int         `json:"trick_leader"`
	Trick          []SeatCards `json:"trick"` // the current trick so far, in play order
	TricksPlayed   int         `json:"tricks_played"`
	AttackerPoints int         `json:"attacker_points"`
	Penalties      []int       `json:"penalties"`
	HardDuns       []int       `json:"hard_duns"`
	DryPot         bool        `json:"dry_pot"`
	MatchPoints    []int       `json:"match_points"`
}

// Event is one thing that happened, as this seat may see it: Kind is its name ("Played"),
// JSON holds all its fields as a JSON object; Seat (-1 if none) and Cards repeat the common ones.
type Event struct {
	Kind  string   `json:"kind"`
	Seat  int      `json:"seat"`
	Cards []string `json:"cards"`
	JSON  string   `json:"json"`
}

// Turn is what decide is given: the decision asked for now and what the seat was told.
type Turn struct {
	Seat        int    // this bot's seat, 0-3 (from the welcome)
	Variant     string // "two-deck-80", "two-deck-fry", "single-deck", "three-deck", ...
	Kind        string // the decision: "DECISION_KIND_LEAD", "DECISION_KIND_FOLLOW", ...
	Observation Observation
	Actions     []Action // hint.actions: never empty, every one legal
	Complete    bool     // hint.complete: Actions holds every legal action
	Note        string   // hint.note: what is allowed when Actions is only a sample
	TimeLeftMs  int64    // this decision's allowance
	BankLeftMs  int64    // the seat's remaining time bank
	Events      []Event  // every event since the previous turn, those of notices included
}

// message: the fields of every message the referee sends, by "type" (the 64-bit integers
// arrive as strings).
type message struct {
	Type        string      `json:"type"`
	Seat        int         `json:"seat"`
	Variant     string      `json:"variant"`
	RequestID   uint64      `json:"request_id,string"`
	Kind        string      `json:"kind"`
	Observation Observation `json:"observation"`
	Hint        struct {
		Complete bool     `json:"complete"`
		Actions  []Action `json:"actions"`
		Note     string   `json:"note"`
	} `json:"hint"`
	TimeLeftMs    int64   `json:"time_left_ms,string"`
	BankLeftMs    int64   `json:"bank_left_ms,string"`
	Events        []Event `json:"events"`
	Reason        string  `json:"reason"`
	Strikes       int     `json:"strikes"`
	DefaultAction Action  `json:"default_action"`
}

type answer struct {
	RequestID uint64 `json:"request_id,string"`
	Action    Action `json:"action"`
}

// Play answers the referee's requests with decide until the match ends.
func Play(decide func(t *Turn) Action) {
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriter(os.Stdout)
	turn := &Turn{Seat: -1}
	for {
		line, err := in.ReadBytes('\n') // (no length limit: an observation may be long)
		if len(line) > 0 && !handle(line, turn, decide, out) {
			return
		}
		if err == io.EOF {
			log.Printf("INFO end of input")
			return
		} else if err != nil {
			log.Printf("WARNING reading standard input: %v", err)
			return
		}
	}
}

// handle one line from the referee; false once the match is over (or the referee gone).
func handle(line []byte, turn *Turn, decide func(t *Turn) Action, out *bufio.Writer) bool {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		log.Printf("WARNING unreadable line from the referee (%d bytes): %v", len(line), err)
		return true
	}
	switch m.Type {
	case "welcome":
		turn.Seat, turn.Variant = m.Seat, m.Variant
		log.Printf("INFO welcome: seat %d, variant %s", m.Seat, m.Variant)
	case "notice":
		turn.Events = append(turn.Events, m.Events...)
	case "request":
		turn.Kind, turn.Observation = m.Kind, m.Observation
		turn.Actions, turn.Complete, turn.Note = m.Hint.Actions, m.Hint.Complete, m.Hint.Note
		turn.TimeLeftMs, turn.BankLeftMs = m.TimeLeftMs, m.BankLeftMs
		turn.Events = append(turn.Events, m.Events...)
		data, err := json.Marshal(answer{m.RequestID, decided(decide, turn)})
		turn.Events = nil
		if err != nil {
			log.Printf("WARNING cannot write an answer: %v", err)
			return true
		}
		out.Write(append(data, '\n'))
		if err := out.Flush(); err != nil {
			log.Printf("WARNING writing the answer: %v", err)
			return false
		}
	case "rejection":
		log.Printf("WARNING rejected: request %d: %s (strikes %d, the referee played %s %v)",
			m.RequestID, m.Reason, m.Strikes, m.DefaultAction.Kind, m.DefaultAction.Cards)
	case "match_end":
		log.Printf("INFO match end: %s", m.Reason)
		return false
	}
	return true
}

// decided: decide's action; the first listed one, should decide panic.
func decided(decide func(t *Turn) Action, turn *Turn) (action Action) {
	defer func() {
		if r := recover(); r != nil {
			log.Printf("WARNING decide failed: %v; answering the first listed action", r)
			action = Action{Kind: "ACTION_KIND_PASS"}
			if len(turn.Actions) > 0 {
				action = turn.Actions[0]
			}
		}
	}()
	return decide(turn)
}
