"""SASL/SCRAM (RFC 5802, Kafka's KIP-84): salted challenge-response, with credentials in ZooKeeper."""
