/**
 * Benchmarks of Sluice beside other rate limiters, run by {@code benchmarks/run}: JMH benchmarks
 * of decisions and annotated calls in the JVM ({@link dev.sluice.benchmarks.SluiceDecisionBenchmark},
 * {@link dev.sluice.benchmarks.PeerDecisionBenchmark},
 * {@link dev.sluice.benchmarks.AnnotatedCallBenchmark}), load against a {@code redis-server}
 * ({@link dev.sluice.benchmarks.RedisLoad}, and for decisions batched per script call,
 * {@link dev.sluice.benchmarks.RedisBatching}), memory per key
 * ({@link dev.sluice.benchmarks.MemoryFootprint}), and the report of them all
 * ({@link dev.sluice.benchmarks.ResultsReport}).
 */
@NullMarked
package dev.sluice.benchmarks;

import org.jspecify.annotations.NullMarked;
