// go-sample: a Shengji Arena bot in Go with nothing but the standard library. arena_stdio.go
// speaks the stdio protocol (docs/protocol.md, section 15) and calls choose once per decision;
// choose answers with one of the request's listed legal actions. Logs go to standard error,
// the seat's log.
package main

import (
	"crypto/rand"
	"encoding/binary"
	"log"
	mrand "math/rand"
	"os"
	"strconv"
	"strings"
	"time"
)

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
	Play(func(t *Turn) Action {
		start := time.Now()
		defer b.count(start)
		return b.choose(t)
	})
	mean := 0.0
	if b.decisions > 0 {
		mean = float64(b.total.Microseconds()) / 1000 / float64(b.decisions)
	}
	log.Printf("INFO done: %d decisions, mean %.3f ms, max %.3f ms, peak RSS %s", b.decisions,
		mean, float64(b.slowest.Microseconds())/1000, peakRSS())
}

func (b *bot) count(start time.Time) {
	elapsed := time.Since(start)
	b.decisions++
	b.total += elapsed
	if elapsed > b.slowest {
		b.slowest = elapsed
	}
}

// choose the action for a turn: always one of the listed actions (never empty, every one
// legal), copied as it came.
func (b *bot) choose(t *Turn) Action {
	if len(t.Actions) == 0 { // (the referee always lists one; a pass, should it not)
		return Action{Kind: "ACTION_KIND_PASS"}
	}
	switch strings.TrimPrefix(t.Kind, "DECISION_KIND_") {
	case "LEAD": // the fewest cards, and among those the highest
		return b.fewest(t.Actions, true)
	case "FOLLOW": // the fewest cards, and among those the lowest
		return b.fewest(t.Actions, false)
	case "DECLARE":
		// pass, but at the final chances when nobody has declared: then declare (four bots
		// that always pass would never fix a trump)
		if t.Observation.Phase == "declare_round" && len(t.Observation.Declarations) == 0 {
			var declares []Action
			for _, a := range t.Actions {
				if a.Kind == "ACTION_KIND_DECLARE" {
					declares = append(declares, a)
				}
			}
			if len(declares) > 0 {
				return b.fewest(declares, true)
			}
		}
		return passOrFirst(t.Actions)
	case "REDEAL", "UPRISING", "HANDOVER", "TRANSFER", "DUN_REVEAL", "JOKER_BURY":
		return passOrFirst(t.Actions) // optional: pass when allowed
	default: // BURY, RETURN and any kind added later: the first listed
		return t.Actions[0]
	}
}

func passOrFirst(actions []Action) Action {
	for _, a := range actions {
		if a.Kind == "ACTION_KIND_PASS" {
			return a
		}
	}
	return actions[0]
}

// fewest: the actions with the fewest cards, then the highest (or lowest) ranks; ties at random.
func (b *bot) fewest(actions []Action, highest bool) Action {
	var best []Action
	var bestScore int64
	for i, a := range actions {
		sum := 0
		for _, c := range a.Cards {
			sum += rank(c)
		}
		if !highest {
			sum = -sum
		}
		score := -1000*int64(len(a.Cards)) + int64(sum)
		if i == 0 || score > bestScore {
			best, bestScore = best[:0], score
		}
		if score == bestScore {
			best = append(best, a)
		}
	}
	return best[b.random.Intn(len(best))]
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
