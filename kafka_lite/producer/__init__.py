"""kafka_lite's producer: ``KafkaProducer`` and the parts it is built from.

Mirrors: org.apache.kafka.clients.producer (KafkaProducer, ProducerRecord, RecordMetadata,
         ProducerInterceptor) and its internals (RecordAccumulator, ProducerBatch, BufferPool, Sender,
         ProducerInterceptors, DefaultPartitioner), Kafka 0.11.0;
         idempotence (TransactionManager's idempotent half) as Kafka 1.0.0 has it
Book:    chapter 2, 2.1.1-2.1.2

How a record travels: ``KafkaProducer.send`` (caller's thread) passes it through the interceptors,
waits for metadata, serializes, picks a partition with the ``DefaultPartitioner`` and appends to the
``RecordAccumulator``, whose
per-partition deques of ``ProducerBatch``es draw memory from the ``BufferPool``. The ``Sender``
(its own thread) asks the accumulator which brokers have ready batches, drains them into one
ProduceRequest per broker, and completes each record's future from the response.
"""

from kafka_lite.producer.future_record_metadata import FutureRecordMetadata, RecordMetadata
from kafka_lite.producer.kafka_producer import KafkaProducer

__all__ = ["FutureRecordMetadata", "KafkaProducer", "RecordMetadata"]
