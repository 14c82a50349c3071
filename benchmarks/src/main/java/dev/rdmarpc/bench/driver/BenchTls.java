package dev.rdmarpc.bench.driver;

import dev.rdmarpc.core.TlsConfig;

import io.grpc.ChannelCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The throwaway certificates of {@code --tls}, shipped in the jar (see {@code tls/gen-certs.sh} next to them): the
 * server presents {@code server.pem} (CN=localhost), clients trust {@code ca.pem} and expect the name "localhost"
 * whatever host they dial, so server and client JVMs need no files.
 */
final class BenchTls {
    /** The name the server certificate carries; clients check it (as the authority) instead of the host dialled. */
    static final String AUTHORITY = "localhost";

    private BenchTls() {
    }

    private static InputStream pem(String name) {
        InputStream in = BenchTls.class.getResourceAsStream("/dev/rdmarpc/bench/tls/" + name);
        if (in == null) {
            throw new IllegalStateException("the benchmark's TLS resource " + name + " is missing from the class path");
        }
        return in;
    }

    /** rdmarpc native client: trusts the benchmark CA, verifies the name "localhost". */
    static TlsConfig nativeClient() {
        try (InputStream ca = pem("ca.pem")) {
            return TlsConfig.forClient().trustRoots(ca).authorityOverride(AUTHORITY).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** rdmarpc native server: presents the benchmark server certificate. */
    static TlsConfig nativeServer() {
        try (InputStream chain = pem("server.pem"); InputStream key = pem("server.key")) {
            return TlsConfig.forServer(chain, key).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** grpc client credentials (both grpc-netty and grpc-compat): trust the benchmark CA. */
    static ChannelCredentials grpcClient() {
        try (InputStream ca = pem("ca.pem")) {
            return TlsChannelCredentials.newBuilder().trustManager(ca).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** grpc server credentials (both grpc-netty and grpc-compat): the benchmark server certificate. */
    static ServerCredentials grpcServer() {
        try (InputStream chain = pem("server.pem"); InputStream key = pem("server.key")) {
            return TlsServerCredentials.newBuilder().keyManager(chain, key).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
