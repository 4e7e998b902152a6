"""Utilities at the bottom of the layering: the scheduler, the timing wheel, and the locks they need.

Mirrors: kafka.utils (core/src/main/scala/kafka/utils/, Kafka 0.10.1): KafkaScheduler, and
         kafka.utils.timer (SystemTimer, TimingWheel); the JDK locks they use (locks.py)
Book:    chapter 6, 6.1.5 (scheduled log jobs) and 6.3 (the timer)
"""
