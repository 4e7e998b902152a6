"""Tools that run the Raft client as a real process: the test server and its checker.

Mirrors: kafka.tools.TestRaftServer (core/src/main/scala/kafka/tools/TestRaftServer.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""
