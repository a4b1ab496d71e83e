package client

// This file classifies what became of a record, for histories (Jepsen's
// ok / fail / info). Kafka's producer only says "failed" with an
// exception; the testbed needs to know whether a failed record might still
// be in the log, so every failure is a *SendError that carries Definite.
//
// Rule: Definite is true only when no attempt of the record's batch may
// have been appended: the batch was never sent, or every request that
// carried it was answered with an error the broker returns before
// appending (definiteRefusal). One attempt that timed out, was lost with
// its connection, was answered NOT_ENOUGH_REPLICAS_AFTER_APPEND or
// REQUEST_TIMED_OUT, or (acks=all) NOT_LEADER_OR_FOLLOWER — which a leader
// that stepped down answers for appended records waiting in its purgatory
// — makes the outcome unknown for good, whatever later attempts say.

import (
	"errors"
	"fmt"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Errors that are not Kafka error codes.
var (
	// ErrRequestTimeout: request.timeout.ms passed without an answer (Kafka's
	// TimeoutException for an expired in-flight request). Outcome unknown.
	ErrRequestTimeout = errors.New("no response within request.timeout.ms")
	// ErrDisconnected: the connection to the broker was closed (because
	// another request on it timed out, or the broker's process was gone and
	// its host reset the connection) with the request in flight (Kafka's
	// NetworkException / DisconnectException). Outcome unknown.
	ErrDisconnected = errors.New("connection to the broker closed with the request in flight")
	// ErrDeliveryTimeout: delivery.timeout.ms passed since the batch was
	// created (KIP-91); for a record that was waiting for its topic's
	// metadata, max.block.ms passed.
	ErrDeliveryTimeout = errors.New("delivery.timeout.ms expired")
	// ErrClosed: Send after Close. Returned by Send; no callback runs.
	ErrClosed = errors.New("producer is closed (Send after Close)")
	// ErrPartitionFailed: an earlier batch of the idempotent producer's
	// partition failed with its sequence number used, so the broker would
	// see a gap (Kafka 2.x's fatal OutOfOrderSequenceException; see the
	// idempotence file). Every later record of that partition fails with it.
	ErrPartitionFailed = errors.New("idempotent partition failed: an earlier batch left a sequence gap")
)

// SendError is the error a Callback receives for a record that was not
// acknowledged.
type SendError struct {
	// Err is the last cause: a *kerr.Error from the broker, or one of the
	// Err* values of this package.
	Err error
	// Definite is true when the record was certainly not written (fail);
	// false when it may have been (info).
	Definite bool
	// Attempts is how many produce requests carried the record's batch.
	Attempts int
}

func (e *SendError) Error() string {
	what := "outcome unknown"
	if e.Definite {
		what = "not written"
	}
	return fmt.Sprintf("produce failed (%s) after %d attempt(s): %v", what, e.Attempts, e.Err)
}

// Unwrap returns Err, so errors.Is(err, kerr.NotEnoughReplicas) works.
func (e *SendError) Unwrap() error { return e.Err }

// Definite reports whether err says the record was certainly not written:
// a *SendError with Definite set. nil and any other error give false.
func Definite(err error) bool {
	var se *SendError
	return errors.As(err, &se) && se.Definite
}

// Outcome is a record's outcome as histories record it.
type Outcome int8

// The outcomes (Jepsen's :ok, :fail, :info).
const (
	// OutcomeOK: acknowledged, at RecordMetadata.Offset.
	OutcomeOK Outcome = iota
	// OutcomeFail: certainly not written.
	OutcomeFail
	// OutcomeUnknown: may or may not have been written (timeouts, lost
	// connections, NOT_ENOUGH_REPLICAS_AFTER_APPEND, acks=0).
	OutcomeUnknown
)

func (o Outcome) String() string {
	return [...]string{"ok", "fail", "info"}[o]
}

// Classify returns the outcome of a record from its callback's arguments.
// A success without an offset (acks=0, whose callback Kafka completes with
// offset -1 as soon as the request is sent) is unknown.
func Classify(md RecordMetadata, err error) Outcome {
	switch {
	case err == nil && md.Offset >= 0:
		return OutcomeOK
	case err == nil:
		return OutcomeUnknown
	case Definite(err):
		return OutcomeFail
	}
	return OutcomeUnknown
}

// definiteRefusal reports whether a produce error is one a broker returns
// before appending anything, so that attempt certainly wrote nothing.
// NB: NOT_LEADER_OR_FOLLOWER is only before-append for acks 0 and 1: with
// acks=all, a leader that loses leadership fails the appended requests
// waiting for the HW with it (DelayedProduce).
func definiteRefusal(err *kerr.Error, acks config.Acks) bool {
	switch err {
	case kerr.NotLeaderForPartition:
		return acks != config.AcksAll
	case kerr.NotEnoughReplicas, kerr.InvalidRequiredAcks, kerr.UnknownTopicOrPartition,
		kerr.LeaderNotAvailable, kerr.CorruptMessage, kerr.MessageTooLarge,
		kerr.RecordListTooLarge, kerr.InvalidRecord, kerr.InvalidTimestamp,
		kerr.TopicAuthorizationFailed, kerr.ClusterAuthorizationFailed,
		kerr.UnsupportedForMessageFormat, kerr.InvalidTopicException,
		kerr.OutOfOrderSequenceNumber, kerr.InvalidProducerEpoch, kerr.UnknownProducerID:
		return true
	}
	return false
}

// invalidatesMetadata reports whether a produce error means the cached
// leader is stale (Kafka's InvalidMetadataException subclasses).
func invalidatesMetadata(err *kerr.Error) bool {
	switch err {
	case kerr.NotLeaderForPartition, kerr.LeaderNotAvailable, kerr.UnknownTopicOrPartition,
		kerr.KafkaStorageError, kerr.FencedLeaderEpoch, kerr.UnknownLeaderEpoch:
		return true
	}
	return false
}

// DefiniteProduceError reports whether a produce request answered with
// error code for a partition certainly did not append its records, for a
// producer with acks (0, 1 or -1): serve mode judges real clients'
// requests by the rule this package judges its own by.
func DefiniteProduceError(code int16, acks int16) bool {
	err := kerr.ErrorForCode(code)
	ke, ok := err.(*kerr.Error)
	if !ok {
		return false
	}
	return definiteRefusal(ke, config.Acks(acks))
}
