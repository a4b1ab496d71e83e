package sim

// ContextForTest returns a node's context so that a test can act as the
// node between events.
func ContextForTest(w *World, id NodeID) *Context { return &w.nodes[id].ctx }
