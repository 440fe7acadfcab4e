// go-grpc-sample: a Shengji Arena bot in Go over gRPC (docs/protocol.md). It opens one
// Referee.Play stream, sends Hello with its seat's token, then answers every DecisionRequest
// with one of the legal actions listed in the request's hint. Logs go to standard error, the
// seat's log. Package arenav1 is generated from referee.proto into shengji_arena/v1; gRPC and
// protobuf are vendored in vendor/ (docs/protocol.md section 12).
package main

import (
	"context"
	"io"
	"log"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc"

	arenav1 "arena/bot/shengji_arena/v1"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("[go-grpc-sample seat " + os.Getenv("ARENA_SEAT") + "] ")
	target, token := os.Getenv("ARENA_REFEREE"), os.Getenv("ARENA_TOKEN")
	if target == "" || token == "" {
		log.Fatal("ARENA_REFEREE or ARENA_TOKEN is unset: the referee starts this bot")
	}
	// target: "unix:///path/seat.sock" (a launched seat's socket) or "host:port"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	conn, err := grpc.DialContext(ctx, target, grpc.WithInsecure(), grpc.WithBlock())
	cancel()
	if err != nil {
		log.Fatalf("cannot reach the referee at %s: %v", target, err)
	}
	defer conn.Close()
	stream, err := arenav1.NewRefereeClient(conn).Play(context.Background())
	if err != nil {
		log.Fatalf("Play: %v", err)
	}
	hello := &arenav1.Hello{Token: token, BotName: "go-grpc-sample", BotVersion: "1.0.0",
		Protocol: "shengji-arena/1"}
	if err := stream.Send(&arenav1.BotMessage{
		Body: &arenav1.BotMessage_Hello{Hello: hello}}); err != nil {
		log.Fatalf("Hello: %v", err)
	}
	decisions := 0
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatalf("stream: %v", err)
		}
		switch body := msg.Body.(type) {
		case *arenav1.RefereeMessage_Welcome:
			log.Printf("match %s, variant %s", body.Welcome.MatchId, body.Welcome.Variant)
		case *arenav1.RefereeMessage_Request:
			answer := &arenav1.Answer{RequestId: body.Request.RequestId,
				Action: choose(body.Request)}
			if err := stream.Send(&arenav1.BotMessage{
				Body: &arenav1.BotMessage_Answer{Answer: answer}}); err != nil {
				log.Fatalf("answer: %v", err)
			}
			decisions++
		case *arenav1.RefereeMessage_Rejection:
			log.Printf("rejected %d: %s", body.Rejection.RequestId, body.Rejection.Reason)
		case *arenav1.RefereeMessage_MatchEnd:
			log.Printf("match over (%s) after %d decisions", body.MatchEnd.Reason, decisions)
			stream.CloseSend()
			return
		}
	}
	log.Printf("stream ended after %d decisions", decisions)
}

// choose one of the listed actions (every one is legal): to lead, the one with the most
// cards; to follow, the one whose highest card is lowest; else a pass when one is listed,
// else the first (a burial, a return).
func choose(req *arenav1.DecisionRequest) *arenav1.Action {
	actions := req.GetHint().GetActions()
	if len(actions) == 0 { // (the referee always lists one)
		return &arenav1.Action{Kind: arenav1.ActionKind_ACTION_KIND_PASS}
	}
	best := actions[0]
	for _, a := range actions {
		switch req.Kind {
		case arenav1.DecisionKind_DECISION_KIND_LEAD:
			if len(a.Cards) > len(best.Cards) {
				best = a
			}
		case arenav1.DecisionKind_DECISION_KIND_FOLLOW:
			if highest(a) < highest(best) {
				best = a
			}
		default:
			if a.Kind == arenav1.ActionKind_ACTION_KIND_PASS {
				return a
			}
		}
	}
	return best
}

var faces = map[string]int{"J": 11, "Q": 12, "K": 13, "A": 14, "LJ": 15, "BJ": 16}

// highest: the rank of an action's highest card ("10H": 10, "AS": 14, "BJ": 16).
func highest(a *arenav1.Action) int {
	top := 0
	for _, card := range a.Cards {
		rank, known := faces[card] // a joker
		if !known && len(card) > 1 {
			if rank, known = faces[card[:len(card)-1]]; !known {
				rank, _ = strconv.Atoi(card[:len(card)-1])
			}
		}
		if rank > top {
			top = rank
		}
	}
	return top
}
