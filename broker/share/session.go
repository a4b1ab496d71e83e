package share

// This file is the share session cache of the partition leaders
// (Kafka 4.2 ShareSessionCache, SharePartitionManager.newContext): a
// ShareFetch at ShareSessionEpoch 0 opens a session for its (group,
// member) with the partitions it names, replacing any earlier one (whose
// records stay acquired until their locks expire, as in Kafka); a fetch
// at the session's epoch adds its partitions, drops its forgotten ones
// and moves the epoch on; -1 closes the session. A fetch at another epoch
// gets INVALID_SHARE_SESSION_EPOCH, one for a member without a session
// SHARE_SESSION_NOT_FOUND, a new session past
// group.share.max.share.sessions SHARE_SESSION_LIMIT_REACHED.
//
// Simplification: Kafka also closes a member's sessions when its
// connection closes (ConnectionDisconnectListener), releasing its
// records; here they stay until their locks expire or the member closes
// the session.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// SessionKey names a share session.
type SessionKey struct{ Group, Member string }

// SessionPartition is a partition of a share session, by topic id.
type SessionPartition struct {
	TopicID   [16]byte
	Partition int32
}

// Session is one member's share session on this broker.
type Session struct {
	Key SessionKey
	// Epoch is the epoch the next request must carry.
	Epoch int32
	// Partitions are the session's partitions in the order added.
	Partitions []SessionPartition
}

// Sessions is a broker's share session cache.
type Sessions struct {
	max      int
	sessions map[SessionKey]*Session
}

// NewSessions returns an empty cache of at most max sessions.
func NewSessions(max int) *Sessions {
	return &Sessions{max: max, sessions: map[SessionKey]*Session{}}
}

// Get returns the session of key, nil if none.
func (s *Sessions) Get(key SessionKey) *Session { return s.sessions[key] }

// Len returns the number of sessions.
func (s *Sessions) Len() int { return len(s.sessions) }

// Open opens a session for key with parts (epoch 0), replacing any.
func (s *Sessions) Open(key SessionKey, parts []SessionPartition) (*Session, *kerr.Error) {
	delete(s.sessions, key)
	if len(s.sessions) >= s.max {
		return nil, kerr.ShareSessionLimitReached
	}
	ss := &Session{Key: key, Epoch: 1}
	ss.add(parts)
	s.sessions[key] = ss
	return ss, nil
}

// Update checks epoch against key's session and applies the request's
// added and forgotten partitions; the epoch moves on.
func (s *Sessions) Update(key SessionKey, epoch int32, added, forgotten []SessionPartition) (*Session, *kerr.Error) {
	ss, err := s.Check(key, epoch)
	if err != nil {
		return nil, err
	}
	ss.add(added)
	ss.Partitions = slices.DeleteFunc(ss.Partitions, func(p SessionPartition) bool { return slices.Contains(forgotten, p) })
	ss.bump()
	return ss, nil
}

// Check returns key's session if epoch is its next epoch.
func (s *Sessions) Check(key SessionKey, epoch int32) (*Session, *kerr.Error) {
	ss := s.sessions[key]
	switch {
	case ss == nil:
		return nil, kerr.ShareSessionNotFound
	case epoch != ss.Epoch:
		return nil, kerr.InvalidShareSessionEpoch
	}
	return ss, nil
}

// Close removes key's session and returns it (nil if none).
func (s *Sessions) Close(key SessionKey) *Session {
	ss := s.sessions[key]
	delete(s.sessions, key)
	return ss
}

// Bump moves a session's epoch on (a ShareAcknowledge at its epoch).
func (ss *Session) bump() {
	if ss.Epoch == 1<<31-1 {
		ss.Epoch = 1
		return
	}
	ss.Epoch++
}

// Bump moves the session's epoch on.
func (ss *Session) Bump() { ss.bump() }

func (ss *Session) add(parts []SessionPartition) {
	for _, p := range parts {
		if !slices.Contains(ss.Partitions, p) {
			ss.Partitions = append(ss.Partitions, p)
		}
	}
}
