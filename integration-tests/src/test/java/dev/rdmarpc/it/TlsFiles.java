package dev.rdmarpc.it;

import dev.rdmarpc.core.TlsConfig;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;

/** The test certificates in {@code src/test/resources/tls} (made by its gen-certs.sh) and configs built from them. */
final class TlsFiles {
    private TlsFiles() {
    }

    /** A file of the test resources' tls folder, e.g. "server.pem". */
    static Path file(String name) {
        URL u = TlsFiles.class.getResource("/tls/" + name);
        if (u == null) {
            throw new IllegalStateException("missing test resource tls/" + name);
        }
        try {
            return Path.of(u.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A server presenting {@code name}.pem / {@code name}.key; it trusts the test CA for client certificates. */
    static TlsConfig.Builder server(String name) {
        return TlsConfig.forServer(file(name + ".pem"), file(name + ".key")).trustRoots(file("ca.pem"));
    }

    /** A client trusting the test CA only. */
    static TlsConfig.Builder client() {
        return TlsConfig.forClient().trustRoots(file("ca.pem"));
    }

    /** A client trusting the test CA and presenting {@code name}.pem / {@code name}.key. */
    static TlsConfig.Builder client(String name) {
        return client().keyCertChain(file(name + ".pem"), file(name + ".key"));
    }
}
