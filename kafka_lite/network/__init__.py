"""Kafka's network layer: size-prefixed frames over non-blocking sockets, one selector per thread.

Mirrors: org.apache.kafka.common.network (Selector, KafkaChannel, NetworkReceive, NetworkSend),
         Kafka 0.10.1; the broker's kafka.network.SocketServer comes with the broker
Book:    chapter 2, 2.1.3-2.1.4 (the client's connections and selector), 2.3 (the server's)
"""
