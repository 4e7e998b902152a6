"""ZooKeeper: the embedded server launcher and Kafka 0.10's paths and JSON formats (book chapter 7)."""
