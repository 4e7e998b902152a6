"""Kafka's network layer: size-prefixed frames over non-blocking sockets, one selector per thread.

Mirrors: org.apache.kafka.common.network (Selector, KafkaChannel, NetworkReceive, NetworkSend) and
         kafka.network (SocketServer, RequestChannel, RequestMetrics), Kafka 0.10.1
Book:    chapter 2, 2.1.3-2.1.4 (the client's connections and selector), 2.3 (the server's)
"""
