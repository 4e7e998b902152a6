"""The Raft client's internals: the leader's batch accumulator and the batch builder."""
