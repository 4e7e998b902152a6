"""Utilities at the bottom of the layering: the scheduler, and later the timing wheel.

Mirrors: kafka.utils (core/src/main/scala/kafka/utils/, Kafka 0.10.1): KafkaScheduler, and later
         kafka.utils.timer (SystemTimer, TimingWheel)
Book:    chapter 6, 6.1.5 (scheduled log jobs) and 6.3 (the timer)
"""
