package zk

// This file holds ZooKeeper's result codes (KeeperException.Code) with
// ZooKeeper's names and numbers. Every code ZooKeeper 3.4-3.6 defines is
// listed so that traces read like ZooKeeper's logs, although the simulated
// server produces only a few of them (no ACLs, no auth, no quotas).

import "strconv"

// Code is a ZooKeeper result code, carried in every Response. Ok is 0; the
// errors are negative, as in KeeperException.Code.
type Code int32

// The result codes, after org.apache.zookeeper.KeeperException.Code.
const (
	Ok                      Code = 0
	SystemError             Code = -1
	RuntimeInconsistency    Code = -2
	DataInconsistency       Code = -3
	ConnectionLoss          Code = -4
	MarshallingError        Code = -5
	Unimplemented           Code = -6
	OperationTimeout        Code = -7
	BadArguments            Code = -8
	NewConfigNoQuorum       Code = -13
	ReconfigInProgress      Code = -14
	APIError                Code = -100
	NoNode                  Code = -101
	NoAuth                  Code = -102
	BadVersion              Code = -103
	NoChildrenForEphemerals Code = -108
	NodeExists              Code = -110
	NotEmpty                Code = -111
	SessionExpired          Code = -112
	InvalidCallback         Code = -113
	InvalidACL              Code = -114
	AuthFailed              Code = -115
	SessionMoved            Code = -118
	NotReadOnly             Code = -119
	EphemeralOnLocalSession Code = -120
	NoWatcher               Code = -121
)

var codeNames = map[Code]string{
	Ok:                      "OK",
	SystemError:             "SYSTEMERROR",
	RuntimeInconsistency:    "RUNTIMEINCONSISTENCY",
	DataInconsistency:       "DATAINCONSISTENCY",
	ConnectionLoss:          "CONNECTIONLOSS",
	MarshallingError:        "MARSHALLINGERROR",
	Unimplemented:           "UNIMPLEMENTED",
	OperationTimeout:        "OPERATIONTIMEOUT",
	BadArguments:            "BADARGUMENTS",
	NewConfigNoQuorum:       "NEWCONFIGNOQUORUM",
	ReconfigInProgress:      "RECONFIGINPROGRESS",
	APIError:                "APIERROR",
	NoNode:                  "NONODE",
	NoAuth:                  "NOAUTH",
	BadVersion:              "BADVERSION",
	NoChildrenForEphemerals: "NOCHILDRENFOREPHEMERALS",
	NodeExists:              "NODEEXISTS",
	NotEmpty:                "NOTEMPTY",
	SessionExpired:          "SESSIONEXPIRED",
	InvalidCallback:         "INVALIDCALLBACK",
	InvalidACL:              "INVALIDACL",
	AuthFailed:              "AUTHFAILED",
	SessionMoved:            "SESSIONMOVED",
	NotReadOnly:             "NOTREADONLY",
	EphemeralOnLocalSession: "EPHEMERALONLOCALSESSION",
	NoWatcher:               "NOWATCHER",
}

// String returns the code's name as in KeeperException.Code, e.g. "NONODE".
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return "CODE(" + strconv.Itoa(int(c)) + ")"
}

// Err returns nil for Ok and an error naming the code otherwise, worded as
// ZooKeeper's exceptions are ("KeeperErrorCode = NONODE").
func (c Code) Err() error {
	if c == Ok {
		return nil
	}
	return codeError(c)
}

type codeError Code

func (e codeError) Error() string { return "KeeperErrorCode = " + Code(e).String() }
