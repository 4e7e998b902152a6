"""The Spark labs' modules: the DataFrame code a learner writes over topic data that went through the
broker (lab 9: consumer lag from ``__consumer_offsets``; lab 10: request latency from
``__request_metrics``).

No Kafka twin: these are the analyses an operator runs on a Kafka cluster's own topics, written as
Spark jobs. Each function takes and returns DataFrames and uses Spark's built-in functions only: no
Python UDF, so the whole job runs in the JVM, and the graders check the physical plan for that.
"""
