"""The KRaft authorizer (KIP-801): ACLs as metadata records, replayed into every node's
StandardAuthorizer.

Mirrors: org.apache.kafka.metadata.authorizer (metadata/src/main/java/org/apache/kafka/metadata/
         authorizer/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft), with chapter 11's ACLs
"""
