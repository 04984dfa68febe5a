package dev.sluice.boot;

/** Unblocking a caller over HTTP with the default in-memory store. */
class InMemoryHttpResetTest extends HttpResetContract {
}
