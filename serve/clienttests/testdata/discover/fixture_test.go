package fixture

import "testing"

// The tests IntegrationTests should find: TestDirect, TestThroughHelper,
// TestAddress, TestTwoHops; not TestUnit, TestMain or Testlower.

func newTestClient() {}

func helperA() { newTestClient() }

func helperB() { helperA() }

func TestDirect(t *testing.T) { newTestClient() }

func TestThroughHelper(t *testing.T) { helperA() }

func TestTwoHops(t *testing.T) { helperB() }

func TestAddress(t *testing.T) { _ = "localhost:9092" }

func TestUnit(t *testing.T) { _ = 9092 }

func Testlower(t *testing.T) { newTestClient() }

func TestMain(m *testing.M) { newTestClient() }
