package dev.rdmarpc.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Objects;

import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;

/**
 * TLS settings of a channel or server: this side's certificate chain and private key (PEM), the trust roots
 * that verify the peer (PEM; the JDK's default trust store when none are given), client authentication on
 * servers, hostname verification on clients. TLS 1.3 is preferred and 1.2 allowed.
 *
 * <p>Built from files, the key material is read again for a new connection whenever a file's size or
 * modification time changed, so certificates can be renewed without a restart; built from streams or bytes, it
 * is read once. Set it with {@link RpcChannel.Builder#tls(TlsConfig)} and {@link RpcServer.Builder#tls(TlsConfig)}.
 */
public final class TlsConfig {
    /** The ALPN protocol id both sides agree on in the TLS handshake; a peer without it is refused. */
    public static final String ALPN_PROTOCOL = "rdmarpc/1";

    /** Whether a server asks for, or requires, a client certificate. */
    public enum ClientAuth {
        /** No client certificate is asked for. */
        NONE,
        /** A client certificate is asked for and verified if sent; clients without one are served. */
        OPTIONAL,
        /** A client without a certificate trusted by the server's roots fails the handshake. */
        REQUIRE
    }

    /** The PEM bytes of one moment: what a new connection's TLS context is built from. */
    public record Material(byte[] certificateChainPem, byte[] privateKeyPem, byte[] trustRootsPem) {
    }

    private final boolean server;
    private final PemSource certificateChain;
    private final PemSource privateKey;
    private final PemSource trustRoots;
    private final KeyManager keyManager;
    private final TrustManager trustManager;
    private final String keyPassword;
    private final ClientAuth clientAuth;
    private final boolean hostnameVerification;
    private final String authorityOverride;
    private final List<String> protocols;
    private Material material;
    private List<FileStamp> stamps;

    private TlsConfig(Builder b) {
        this.server = b.server;
        this.certificateChain = b.certificateChain;
        this.privateKey = b.privateKey;
        this.trustRoots = b.trustRoots;
        this.keyManager = b.keyManager;
        this.trustManager = b.trustManager;
        this.keyPassword = b.keyPassword;
        this.clientAuth = b.clientAuth;
        this.hostnameVerification = b.hostnameVerification;
        this.authorityOverride = b.authorityOverride;
        this.protocols = List.copyOf(b.protocols);
    }

    /** A client configuration: trusts the JDK's default roots and verifies the server's host name until told otherwise. */
    public static Builder forClient() {
        return new Builder(false);
    }

    /** A server configuration with its certificate chain and PKCS#8 private key, as PEM files (re-read when they change). */
    public static Builder forServer(Path certificateChainPem, Path privateKeyPem) {
        return new Builder(true).keyCertChain(certificateChainPem, privateKeyPem);
    }

    /** A server configuration with its certificate chain and PKCS#8 private key, read now from PEM streams. */
    public static Builder forServer(InputStream certificateChainPem, InputStream privateKeyPem) {
        return new Builder(true).keyCertChain(certificateChainPem, privateKeyPem);
    }

    /** A server configuration whose key and certificate come from a key manager (e.g. of a key store). */
    public static Builder forServer(KeyManager keyManager) {
        return new Builder(true).keyManager(keyManager);
    }

    /**
     * The same configuration with another authority override (client only): what a transport layered on rdmarpc
     * uses when each connection has its own authority. The key material is shared, files are still re-read.
     */
    public TlsConfig withAuthorityOverride(String host) {
        if (server) {
            throw new IllegalStateException("authorityOverride is a client setting");
        }
        Builder b = new Builder(false);
        b.certificateChain = certificateChain;
        b.privateKey = privateKey;
        b.trustRoots = trustRoots;
        b.keyManager = keyManager;
        b.trustManager = trustManager;
        b.keyPassword = keyPassword;
        b.hostnameVerification = hostnameVerification;
        b.authorityOverride = host;
        b.protocols = protocols;
        return new TlsConfig(b);
    }

    /** The password of an encrypted PKCS#8 private key, or null for an unencrypted one. */
    public String keyPassword() {
        return keyPassword;
    }

    /** Whether this is a server's configuration. */
    public boolean isServer() {
        return server;
    }

    /** The server's client-certificate policy (NONE on clients). */
    public ClientAuth clientAuth() {
        return clientAuth;
    }

    /** Whether a client checks that the server's certificate names the host it dialled (default true). */
    public boolean hostnameVerification() {
        return hostnameVerification;
    }

    /** The host name a client expects in the server's certificate (and sends as SNI) instead of the dialled one, or null. */
    public String authorityOverride() {
        return authorityOverride;
    }

    /** The TLS versions allowed, most preferred first. */
    public List<String> protocols() {
        return protocols;
    }

    /** This side's key manager when one was given instead of PEM key material, or null. */
    public KeyManager keyManager() {
        return keyManager;
    }

    /** The trust manager verifying the peer when one was given instead of PEM roots, or null. */
    public TrustManager trustManager() {
        return trustManager;
    }

    /** Whether the key material comes from files that are re-read when they change. */
    public boolean reloadsFromFiles() {
        return certificateChain instanceof PemSource.File || privateKey instanceof PemSource.File
                || trustRoots instanceof PemSource.File;
    }

    /**
     * The PEM bytes to build a new connection's TLS context from: the same object as last time unless a file
     * changed (callers compare by identity to know when to rebuild). A field not configured is null.
     *
     * @throws UncheckedIOException naming the file when one cannot be read
     */
    public synchronized Material material() {
        List<FileStamp> now = stamps();
        if (material == null || !now.equals(stamps)) {
            material = new Material(read(certificateChain), read(privateKey), read(trustRoots));
            stamps = now;
        }
        return material;
    }

    private List<FileStamp> stamps() {
        return java.util.stream.Stream.of(certificateChain, privateKey, trustRoots)
                .filter(s -> s instanceof PemSource.File)
                .map(s -> FileStamp.of(((PemSource.File) s).path()))
                .toList();
    }

    private static byte[] read(PemSource s) {
        return switch (s) {
            case null -> null;
            case PemSource.Bytes b -> b.bytes();
            case PemSource.File f -> {
                try {
                    yield Files.readAllBytes(f.path());
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read TLS file " + f.path() + ": " + e.getMessage(), e);
                }
            }
        };
    }

    @Override
    public String toString() {
        return "TlsConfig{" + (server ? "server, clientAuth=" + clientAuth : "client, hostnameVerification=" + hostnameVerification
                + (authorityOverride != null ? ", authorityOverride=" + authorityOverride : ""))
                + (trustRoots != null || trustManager != null ? ", own trust roots" : ", default trust roots")
                + ", protocols=" + protocols + "}";
    }

    /** Where a PEM block comes from. */
    private sealed interface PemSource {
        /** Read once. */
        record Bytes(byte[] bytes) implements PemSource {
        }

        /** Read again when the file changes. */
        record File(Path path) implements PemSource {
        }
    }

    /** A file's size and modification time, to notice that it changed. */
    private record FileStamp(Path path, long size, FileTime modified) {
        static FileStamp of(Path p) {
            try {
                return new FileStamp(p, Files.size(p), Files.getLastModifiedTime(p));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read TLS file " + p + ": " + e.getMessage(), e);
            }
        }
    }

    /** Builds a {@link TlsConfig}. */
    public static final class Builder {
        private final boolean server;
        private PemSource certificateChain;
        private PemSource privateKey;
        private PemSource trustRoots;
        private KeyManager keyManager;
        private TrustManager trustManager;
        private String keyPassword;
        private ClientAuth clientAuth = ClientAuth.NONE;
        private boolean hostnameVerification = true;
        private String authorityOverride;
        private List<String> protocols = List.of("TLSv1.3", "TLSv1.2");

        private Builder(boolean server) {
            this.server = server;
        }

        /** This side's certificate chain (leaf first) and PKCS#8 private key as PEM files, re-read when they change. */
        public Builder keyCertChain(Path certificateChainPem, Path privateKeyPem) {
            this.certificateChain = new PemSource.File(Objects.requireNonNull(certificateChainPem, "certificateChainPem"));
            this.privateKey = new PemSource.File(Objects.requireNonNull(privateKeyPem, "privateKeyPem"));
            this.keyManager = null;
            return this;
        }

        /** This side's certificate chain (leaf first) and PKCS#8 private key, read now from PEM streams (not closed). */
        public Builder keyCertChain(InputStream certificateChainPem, InputStream privateKeyPem) {
            this.certificateChain = new PemSource.Bytes(readAll(certificateChainPem, "certificateChainPem"));
            this.privateKey = new PemSource.Bytes(readAll(privateKeyPem, "privateKeyPem"));
            this.keyManager = null;
            return this;
        }

        /** The password of the private key when it is an encrypted PKCS#8 PEM ("ENCRYPTED PRIVATE KEY"). */
        public Builder keyPassword(String password) {
            this.keyPassword = password;
            return this;
        }

        /** This side's key and certificate from a key manager instead of PEM. */
        public Builder keyManager(KeyManager manager) {
            this.keyManager = Objects.requireNonNull(manager, "manager");
            this.certificateChain = null;
            this.privateKey = null;
            return this;
        }

        /** The roots that verify the peer's certificate, as a PEM file of one or more certificates (re-read when it changes). */
        public Builder trustRoots(Path rootsPem) {
            this.trustRoots = new PemSource.File(Objects.requireNonNull(rootsPem, "rootsPem"));
            this.trustManager = null;
            return this;
        }

        /** The roots that verify the peer's certificate, read now from a PEM stream (not closed). */
        public Builder trustRoots(InputStream rootsPem) {
            this.trustRoots = new PemSource.Bytes(readAll(rootsPem, "rootsPem"));
            this.trustManager = null;
            return this;
        }

        /** A trust manager that verifies the peer's certificate instead of PEM roots. */
        public Builder trustManager(TrustManager manager) {
            this.trustManager = Objects.requireNonNull(manager, "manager");
            this.trustRoots = null;
            return this;
        }

        /** Server only: whether clients must (REQUIRE) or may (OPTIONAL) present a certificate; default NONE. */
        public Builder clientAuth(ClientAuth auth) {
            if (!server && auth != ClientAuth.NONE) {
                throw new IllegalStateException("clientAuth is a server setting");
            }
            this.clientAuth = Objects.requireNonNull(auth, "auth");
            return this;
        }

        /**
         * Client only: whether the server's certificate must name the host dialled (or the authority override);
         * default true. Turning it off accepts any certificate the trust roots vouch for, whoever it names.
         */
        public Builder hostnameVerification(boolean verify) {
            if (server && verify) {
                throw new IllegalStateException("hostnameVerification is a client setting");
            }
            this.hostnameVerification = verify;
            return this;
        }

        /** Client only: the host name expected in the server's certificate and sent as SNI, instead of the one dialled. */
        public Builder authorityOverride(String host) {
            if (server) {
                throw new IllegalStateException("authorityOverride is a client setting");
            }
            this.authorityOverride = host;
            return this;
        }

        /** The TLS versions allowed (default TLSv1.3 then TLSv1.2). */
        public Builder protocols(String... versions) {
            if (versions.length == 0) {
                throw new IllegalArgumentException("at least one TLS version is needed");
            }
            for (String v : versions) {
                if (!v.equals("TLSv1.3") && !v.equals("TLSv1.2")) {
                    throw new IllegalArgumentException("unsupported TLS version " + v + " (TLSv1.3 and TLSv1.2 are allowed)");
                }
            }
            this.protocols = List.of(versions);
            return this;
        }

        public TlsConfig build() {
            if (server && certificateChain == null && keyManager == null) {
                throw new IllegalStateException("a TLS server needs a certificate chain and private key");
            }
            return new TlsConfig(this);
        }

        private static byte[] readAll(InputStream in, String what) {
            Objects.requireNonNull(in, what);
            try {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + what + ": " + e.getMessage(), e);
            }
        }
    }
}
