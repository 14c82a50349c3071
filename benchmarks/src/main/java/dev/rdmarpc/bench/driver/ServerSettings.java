package dev.rdmarpc.bench.driver;

/**
 * How a benchmark server is started.
 *
 * @param bindHost       address to listen on ("0.0.0.0" for all)
 * @param port           port to listen on, 0 for any free one
 * @param maxMessage     largest message accepted, bytes (same for every transport)
 * @param directExecutor run handlers on the I/O threads (true) or on the framework's default executor
 * @param tls            serve TLS with the benchmark's throwaway server certificate ({@code BenchTls})
 */
public record ServerSettings(String bindHost, int port, int maxMessage, boolean directExecutor, boolean tls) {
}
