package jepsen_test

import (
	"fmt"
	"strings"

	"github.com/kafkasim/kafkasim/checkers/jepsen"
)

func Example() {
	history := `{:type :ok, :f :send, :value [[:send 3 [11 4]]], :process 0, :index 1}
{:type :ok, :f :send, :value [[:send 3 [12 5]]], :process 0, :index 3}
{:type :ok, :f :send, :value [[:send 3 [13 6]]], :process 0, :index 5}
{:type :ok, :f :poll, :value [[:poll {3 [[11 4] [13 6]]}]], :process 1, :index 7}
`
	h, err := jepsen.ReadHistory(strings.NewReader(history))
	if err != nil {
		panic(err)
	}
	for _, v := range jepsen.Check(h) {
		if len(v.Anomalies) > 0 {
			fmt.Println(v.Anomalies[0])
		}
	}
	// Output:
	// lost-write key=3 value=5 offsets=[12]: sent by #3 (ok) at offset 12 (index 1); #7 read value 6 at offset 13 (index 2), but no ok poll or txn read it (ops #3, #7) [contract broken]
	// int-poll-skip key=3 offsets=[12]: #7 read value 4 then 6, skipping 5 (delta 2) (ops #7) [contract broken]
	// unseen unseen={3 1} offsets=[12]: 1 acknowledged value on 1 key never read by an ok poll or txn: key 3: 5 (offset 12, sent by #3); lost, or late (sent after the last polls caught up) (ops #3) [contract broken]
}
