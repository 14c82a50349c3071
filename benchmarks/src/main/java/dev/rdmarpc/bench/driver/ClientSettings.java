package dev.rdmarpc.bench.driver;

import java.time.Duration;

/**
 * How a benchmark client connects.
 *
 * @param host           server host
 * @param port           server port of the transport
 * @param maxMessage     largest message accepted, bytes
 * @param directExecutor run callbacks on the I/O threads (true) or on the framework's default executor
 * @param connections    connections (channels) to open; lanes are spread over them
 * @param connectTimeout time allowed to connect and complete a first call
 * @param tls            connect with TLS, trusting the benchmark's throwaway CA ({@code BenchTls})
 */
public record ClientSettings(String host, int port, int maxMessage, boolean directExecutor, int connections,
                             Duration connectTimeout, boolean tls) {

    /** "host:port", IPv6 hosts in brackets. */
    public String target() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
