package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.WireProtocol;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;

import java.io.ByteArrayInputStream;
import java.lang.System.Logger.Level;

import javax.net.ssl.SSLException;

/**
 * Builds a transport's Netty {@link SslContext} from core's {@link TlsConfig}: OpenSSL (BoringSSL from
 * netty-tcnative) when it loads, the JDK's provider otherwise ({@code -Drdmarpc.tls.provider=jdk|openssl} chooses);
 * ALPN with {@link TlsConfig#ALPN_PROTOCOL}, and on a server that serves gRPC-over-HTTP/2 clients {@link #ALPN_H2}
 * too (a client offers what its {@link WireProtocol} lets it speak). When the config's files change, the next connection gets a
 * context built from the new material; connections already open keep theirs.
 */
final class TlsContexts {
    /** HTTP/2's ALPN protocol id, which gRPC clients offer. */
    static final String ALPN_H2 = "h2";
    private final TlsConfig config;
    /** The ALPN protocols offered (client) or agreed to (server), in order of preference. */
    private final String[] alpn;
    private final SslProvider provider;
    private TlsConfig.Material builtFrom;
    private SslContext context;

    /**
     * Contexts that also agree to {@link #ALPN_H2} when {@code offerH2} (servers that serve gRPC-over-HTTP/2 clients).
     * Builds the first context now, so that unreadable or malformed key material fails when the transport is made.
     *
     * @throws IllegalArgumentException naming what is wrong with the configuration
     */
    TlsContexts(TlsConfig config, boolean offerH2) {
        this(config, offerH2 && config.isServer() ? new String[] {TlsConfig.ALPN_PROTOCOL, ALPN_H2}
                : new String[] {TlsConfig.ALPN_PROTOCOL});
    }

    /** A client's contexts: ALPN offers what {@code protocol} lets it speak ({@code rdmarpc/1}, {@code h2} or both). */
    TlsContexts(TlsConfig config, WireProtocol protocol) {
        this(config, switch (protocol) {
            case AUTO -> new String[] {TlsConfig.ALPN_PROTOCOL, ALPN_H2};
            case RDMARPC -> new String[] {TlsConfig.ALPN_PROTOCOL};
            case GRPC -> new String[] {ALPN_H2};
        });
    }

    private TlsContexts(TlsConfig config, String[] alpn) {
        this.config = config;
        this.alpn = alpn;
        this.provider = chooseProvider();
        current();
    }

    /** The context for a new connection, rebuilt first if the configuration's files changed. */
    synchronized SslContext current() {
        TlsConfig.Material m;
        try {
            m = config.material();
        } catch (RuntimeException e) {
            if (context == null) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            TcpFrameConnection.LOG.log(Level.WARNING, "keeping the previous TLS material: {0}", e.getMessage());
            return context;
        }
        if (m != builtFrom || context == null) {
            try {
                context = build(m);
                if (builtFrom != null) {
                    TcpFrameConnection.LOG.log(Level.INFO, "TLS material reloaded; new connections use it");
                }
                builtFrom = m;
            } catch (SSLException | RuntimeException e) {
                if (context == null) {
                    throw new IllegalArgumentException("cannot use the TLS configuration " + config + ": " + e.getMessage(), e);
                }
                builtFrom = m; // do not retry a broken file for every connection; a later change is picked up
                TcpFrameConnection.LOG.log(Level.WARNING, "keeping the previous TLS material, the changed files are unusable: {0}",
                        e.getMessage());
            }
        }
        return context;
    }

    /** "OpenSSL" or "JDK": who runs the handshakes. */
    String providerName() {
        return provider == SslProvider.JDK ? "JDK" : "OpenSSL";
    }

    private SslContext build(TlsConfig.Material m) throws SSLException {
        SslContextBuilder b;
        if (config.isServer()) {
            b = config.keyManager() != null ? SslContextBuilder.forServer(config.keyManager())
                    : SslContextBuilder.forServer(new ByteArrayInputStream(m.certificateChainPem()),
                    new ByteArrayInputStream(m.privateKeyPem()), config.keyPassword());
            b.clientAuth(switch (config.clientAuth()) {
                case NONE -> ClientAuth.NONE;
                case OPTIONAL -> ClientAuth.OPTIONAL;
                case REQUIRE -> ClientAuth.REQUIRE;
            });
        } else {
            b = SslContextBuilder.forClient();
            if (config.keyManager() != null) {
                b.keyManager(config.keyManager());
            } else if (m.certificateChainPem() != null) {
                b.keyManager(new ByteArrayInputStream(m.certificateChainPem()), new ByteArrayInputStream(m.privateKeyPem()),
                        config.keyPassword());
            }
            b.endpointIdentificationAlgorithm(config.hostnameVerification() ? "HTTPS" : null);
        }
        if (config.trustManager() != null) {
            b.trustManager(config.trustManager());
        } else if (m.trustRootsPem() != null) {
            b.trustManager(new ByteArrayInputStream(m.trustRootsPem()));
        }
        // OpenSSL can only leave ALPN out on a mismatch; TlsHandshake then refuses a peer without rdmarpc/1 itself.
        ApplicationProtocolConfig.SelectorFailureBehavior onNoMatch = provider == SslProvider.JDK
                ? ApplicationProtocolConfig.SelectorFailureBehavior.FATAL_ALERT
                : ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE;
        b.applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN, onNoMatch,
                ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                alpn));
        return b.sslProvider(provider).protocols(config.protocols()).build();
    }

    private static SslProvider chooseProvider() {
        String asked = System.getProperty("rdmarpc.tls.provider", "auto");
        return switch (asked) {
            case "jdk" -> SslProvider.JDK;
            case "openssl" -> {
                if (!OpenSsl.isAvailable()) {
                    throw new IllegalStateException("rdmarpc.tls.provider=openssl, but OpenSSL is not available: "
                            + OpenSsl.unavailabilityCause());
                }
                yield SslProvider.OPENSSL;
            }
            case "auto" -> OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
            default -> throw new IllegalArgumentException("rdmarpc.tls.provider must be auto, jdk or openssl, not " + asked);
        };
    }
}
