// go-sample: a Shengji Arena bot in Go speaking the stdio protocol (docs/protocol.md,
// sample_bots/stdio/README.md) with nothing but the standard library. The referee writes each
// message as one JSON line on standard input; the bot answers each request with one JSON line
// on standard output, an action copied from the request's legal hint, and logs to standard
// error, which is the seat's log.
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"io"
	"log"
	mrand "math/rand"
	"os"
	"strconv"
	"strings"
	"time"
)

// message: the fields of the referee's messages this bot reads (the rest are ignored).
type message struct {
	Type        string          `json:"type"`
	RequestID   json.RawMessage `json:"request_id"`
	Kind        string          `json:"kind"`
	Seat        json.RawMessage `json:"seat"`
	Variant     string          `json:"variant"`
	Reason      json.RawMessage `json:"reason"`
	Observation struct {
		Phase        string            `json:"phase"`
		Declarations []json.RawMessage `json:"declarations"`
	} `json:"observation"`
	Hint struct {
		Actions []json.RawMessage `json:"actions"`
	} `json:"hint"`
}

// action: a listed action, kept as it came (raw) and read for its kind and cards.
type action struct {
	raw   json.RawMessage
	kind  string
	cards []string
}

type answer struct {
	RequestID json.RawMessage `json:"request_id,omitempty"`
	Action    json.RawMessage `json:"action"`
}

type bot struct {
	random    *mrand.Rand
	decisions int
	total     time.Duration
	slowest   time.Duration
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("[go-sample] ")
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil { // the tie-breaks: two copies do not play alike
		binary.LittleEndian.PutUint64(seed[:], uint64(time.Now().UnixNano()))
	}
	b := &bot{random: mrand.New(mrand.NewSource(int64(binary.LittleEndian.Uint64(seed[:]))))}
	log.Printf("INFO seat %s of match %s, session %x", os.Getenv("ARENA_SEAT"),
		os.Getenv("ARENA_MATCH_ID"), seed)
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n') // (no line limit: an observation may be long)
		if len(strings.TrimSpace(string(line))) > 0 {
			if b.handle(line, out) {
				break
			}
		}
		if err == io.EOF {
			break
		} else if err != nil {
			log.Printf("WARNING reading: %v", err)
			break
		}
	}
	mean := 0.0
	if b.decisions > 0 {
		mean = float64(b.total.Microseconds()) / 1000 / float64(b.decisions)
	}
	log.Printf("INFO done: %d decisions, mean %.3f ms, max %.3f ms, peak RSS %s", b.decisions,
		mean, float64(b.slowest.Microseconds())/1000, peakRSS())
}

// handle one line; true at match_end.
func (b *bot) handle(line []byte, out *bufio.Writer) bool {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		log.Printf("WARNING unreadable line: %v", err)
		return false
	}
	switch m.Type {
	case "request":
		start := time.Now()
		data, err := json.Marshal(answer{RequestID: m.RequestID, Action: b.choose(&m)})
		if err != nil {
			log.Printf("WARNING cannot write an answer: %v", err)
			return false
		}
		out.Write(data)
		out.WriteByte('\n')
		out.Flush()
		b.count(time.Since(start))
	case "welcome":
		log.Printf("INFO welcome: seat %s, variant %s", m.Seat, m.Variant)
	case "rejection":
		log.Printf("WARNING rejected: %s", m.Reason)
	case "match_end":
		log.Printf("INFO match end: %s", m.Reason)
		return true
	}
	return false
}

func (b *bot) count(elapsed time.Duration) {
	b.decisions++
	b.total += elapsed
	if elapsed > b.slowest {
		b.slowest = elapsed
	}
}

// choose the action for a request: always one of hint.actions (never empty, every one legal),
// copied as it came.
func (b *bot) choose(m *message) json.RawMessage {
	actions := make([]action, 0, len(m.Hint.Actions))
	for _, raw := range m.Hint.Actions {
		var a struct {
			Kind  string   `json:"kind"`
			Cards []string `json:"cards"`
		}
		_ = json.Unmarshal(raw, &a)
		actions = append(actions, action{raw, a.Kind, a.Cards})
	}
	if len(actions) == 0 { // (the referee always lists one; a pass, should it not)
		return json.RawMessage(`{"kind":"ACTION_KIND_PASS"}`)
	}
	switch strings.TrimPrefix(m.Kind, "DECISION_KIND_") {
	case "LEAD": // the fewest cards, and among those the highest
		return b.fewest(actions, true)
	case "FOLLOW": // the fewest cards, and among those the lowest
		return b.fewest(actions, false)
	case "DECLARE":
		// pass, but at the final chances when nobody has declared: then declare (four bots
		// that always pass would never fix a trump)
		if m.Observation.Phase == "declare_round" && len(m.Observation.Declarations) == 0 {
			var declares []action
			for _, a := range actions {
				if a.kind == "ACTION_KIND_DECLARE" {
					declares = append(declares, a)
				}
			}
			if len(declares) > 0 {
				return b.fewest(declares, true)
			}
		}
		return passOrFirst(actions)
	case "REDEAL", "UPRISING", "HANDOVER", "TRANSFER", "DUN_REVEAL", "JOKER_BURY":
		return passOrFirst(actions) // optional: pass when allowed
	default: // BURY, RETURN and any kind added later: the first listed
		return actions[0].raw
	}
}

func passOrFirst(actions []action) json.RawMessage {
	for _, a := range actions {
		if a.kind == "ACTION_KIND_PASS" {
			return a.raw
		}
	}
	return actions[0].raw
}

// fewest: the actions with the fewest cards, then the highest (or lowest) ranks; ties at random.
func (b *bot) fewest(actions []action, highest bool) json.RawMessage {
	var best []action
	var bestScore int64
	for i, a := range actions {
		sum := 0
		for _, c := range a.cards {
			sum += rank(c)
		}
		if !highest {
			sum = -sum
		}
		score := -1000*int64(len(a.cards)) + int64(sum)
		if i == 0 || score > bestScore {
			best, bestScore = best[:0], score
		}
		if score == bestScore {
			best = append(best, a)
		}
	}
	return best[b.random.Intn(len(best))].raw
}

// rank: 2 .. A as 0 .. 12, the little joker 13, the big joker 14.
func rank(card string) int {
	switch card {
	case "LJ":
		return 13
	case "BJ":
		return 14
	}
	if len(card) < 2 {
		return 0
	}
	switch r := card[:len(card)-1]; r {
	case "J":
		return 9
	case "Q":
		return 10
	case "K":
		return 11
	case "A":
		return 12
	default:
		n, err := strconv.Atoi(r)
		if err != nil {
			return 0
		}
		return n - 2
	}
}

// peakRSS: the process's peak resident memory (VmHWM in /proc/self/status), or "?".
func peakRSS() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(line[6:])
		}
	}
	return "?"
}

