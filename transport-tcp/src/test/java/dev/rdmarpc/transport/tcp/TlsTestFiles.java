package dev.rdmarpc.transport.tcp;

import java.net.URISyntaxException;
import java.nio.file.Path;

/** The test certificates in the test resources' tls folder: a CA, and a server certificate for localhost it signed. */
final class TlsTestFiles {
    private TlsTestFiles() {
    }

    /** A file of the tls folder, e.g. "server.pem". */
    static Path path(String name) {
        try {
            return Path.of(TlsTestFiles.class.getResource("/tls/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
