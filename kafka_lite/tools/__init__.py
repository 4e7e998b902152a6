"""Tools that read the cluster or its files, as Kafka's ``kafka.tools`` package (book chapter 8)."""
