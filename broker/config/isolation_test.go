package config

import (
	"strings"
	"testing"
)

// isolation.level takes Kafka's two values; anything else names them.
func TestIsolationLevelParse(t *testing.T) {
	c, err := ParseConsumer(map[string]string{"isolation.level": "read_committed"})
	if err != nil || c.IsolationLevel != ReadCommitted {
		t.Fatalf("read_committed: %v %v", c.IsolationLevel, err)
	}
	if d := DefaultConsumer(); d.IsolationLevel != ReadUncommitted {
		t.Fatalf("default %v, want read_uncommitted", d.IsolationLevel)
	}
	_, err = ParseConsumer(map[string]string{"isolation.level": "serializable"})
	if err == nil || !strings.Contains(err.Error(), "isolation.level") || !strings.Contains(err.Error(), "allowed: read_committed, read_uncommitted") {
		t.Fatalf("bad value: %v", err)
	}
	bad := DefaultConsumer()
	bad.IsolationLevel = "snapshot"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "allowed: read_committed, read_uncommitted") {
		t.Fatalf("Validate: %v", err)
	}
}
