/**
 * The Redis stores, through Redisson: {@link dev.sluice.redisson.RedissonRateLimitStore}, which
 * runs one Lua script per decision, deciding all tiers of a key atomically, and
 * {@link dev.sluice.redisson.Bucket4jRedissonStore}, which keeps {@code TOKEN_BUCKET} tiers in
 * Bucket4j buckets through Bucket4j's Redisson integration.
 * {@link dev.sluice.redisson.RedissonClientConfigs} has client configurations that suit both.
 */
@NullMarked
package dev.sluice.redisson;

import org.jspecify.annotations.NullMarked;
