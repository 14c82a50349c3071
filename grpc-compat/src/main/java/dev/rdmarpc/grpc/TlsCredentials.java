package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TlsConfig;
import io.grpc.CallCredentials;
import io.grpc.ChannelCredentials;
import io.grpc.ChoiceChannelCredentials;
import io.grpc.ChoiceServerCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;

import java.io.ByteArrayInputStream;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;

/**
 * Maps grpc's channel and server credentials onto rdmarpc's {@link TlsConfig}, as grpc-netty's protocol
 * negotiators do: insecure means plaintext, TLS credentials become a TLS config (key and trust managers or PEM,
 * mutual TLS, client auth), composite credentials keep their call credentials for grpc to apply, a choice takes
 * the first one understood, and anything else is refused naming what is not supported.
 */
final class TlsCredentials {
    private static final Set<TlsChannelCredentials.Feature> CLIENT_FEATURES =
            EnumSet.of(TlsChannelCredentials.Feature.MTLS, TlsChannelCredentials.Feature.CUSTOM_MANAGERS);
    private static final Set<TlsServerCredentials.Feature> SERVER_FEATURES =
            EnumSet.of(TlsServerCredentials.Feature.MTLS, TlsServerCredentials.Feature.CUSTOM_MANAGERS);

    private TlsCredentials() {
    }

    /** A channel's security: its TLS config (null for plaintext) and the call credentials grpc applies per call. */
    record Client(TlsConfig tls, CallCredentials callCredentials) {
    }

    /**
     * The channel's TLS config and call credentials.
     *
     * @throws IllegalArgumentException naming the credential type or TLS features that are not supported
     */
    static Client forChannel(ChannelCredentials creds) {
        String error = unsupported(creds);
        if (error != null) {
            throw new IllegalArgumentException(error);
        }
        return switch (creds) {
            case InsecureChannelCredentials _ -> new Client(null, null);
            case TlsChannelCredentials tls -> new Client(clientConfig(tls), null);
            case CompositeChannelCredentials composite -> {
                Client inner = forChannel(composite.getChannelCredentials());
                yield new Client(inner.tls(), composite.getCallCredentials());
            }
            case ChoiceChannelCredentials choice -> forChannel(choice.getCredentialsList().stream()
                    .filter(c -> unsupported(c) == null).findFirst().orElseThrow());
            default -> throw new AssertionError(creds);
        };
    }

    /** Why the credentials cannot be used, or null when they can. */
    private static String unsupported(ChannelCredentials creds) {
        return switch (creds) {
            case InsecureChannelCredentials _ -> null;
            case TlsChannelCredentials tls -> {
                Set<TlsChannelCredentials.Feature> unknown = tls.incomprehensible(CLIENT_FEATURES);
                yield unknown.isEmpty() ? null : "TLS features not understood: " + unknown;
            }
            case CompositeChannelCredentials composite -> unsupported(composite.getChannelCredentials());
            case ChoiceChannelCredentials choice -> noneSupported(choice.getCredentialsList(), TlsCredentials::unsupported);
            default -> "Unsupported credential type: " + creds.getClass().getName();
        };
    }

    /** Null when one of the choices can be used, otherwise why none can. */
    private static <C> String noneSupported(java.util.List<C> choices, java.util.function.Function<C, String> unsupported) {
        StringBuilder all = new StringBuilder();
        for (C c : choices) {
            String e = unsupported.apply(c);
            if (e == null) {
                return null;
            }
            all.append(all.isEmpty() ? "" : ", ").append(e);
        }
        return "no choice of credentials is supported: " + all;
    }

    private static TlsConfig clientConfig(TlsChannelCredentials tls) {
        TlsConfig.Builder b = TlsConfig.forClient();
        if (tls.getKeyManagers() != null) {
            b.keyManager(first(tls.getKeyManagers(), "key manager"));
        } else if (tls.getCertificateChain() != null) {
            b.keyCertChain(new ByteArrayInputStream(tls.getCertificateChain()), new ByteArrayInputStream(tls.getPrivateKey()))
                    .keyPassword(tls.getPrivateKeyPassword());
        }
        if (tls.getTrustManagers() != null) {
            b.trustManager(first(tls.getTrustManagers(), "trust manager"));
        } else if (tls.getRootCertificates() != null) {
            b.trustRoots(new ByteArrayInputStream(tls.getRootCertificates()));
        }
        return b.build();
    }

    /**
     * The server's TLS config, null for plaintext.
     *
     * @throws IllegalArgumentException naming the credential type or TLS features that are not supported
     */
    static TlsConfig forServer(ServerCredentials creds) {
        String error = unsupported(creds);
        if (error != null) {
            throw new IllegalArgumentException(error);
        }
        return switch (creds) {
            case InsecureServerCredentials _ -> null;
            case TlsServerCredentials tls -> serverConfig(tls);
            case ChoiceServerCredentials choice -> forServer(choice.getCredentialsList().stream()
                    .filter(c -> unsupported(c) == null).findFirst().orElseThrow());
            default -> throw new AssertionError(creds);
        };
    }

    private static String unsupported(ServerCredentials creds) {
        return switch (creds) {
            case InsecureServerCredentials _ -> null;
            case TlsServerCredentials tls -> {
                Set<TlsServerCredentials.Feature> unknown = tls.incomprehensible(SERVER_FEATURES);
                yield unknown.isEmpty() ? null : "TLS features not understood: " + unknown;
            }
            case ChoiceServerCredentials choice -> noneSupported(choice.getCredentialsList(), TlsCredentials::unsupported);
            default -> "Unsupported credential type: " + creds.getClass().getName();
        };
    }

    private static TlsConfig serverConfig(TlsServerCredentials tls) {
        TlsConfig.Builder b = tls.getKeyManagers() != null
                ? TlsConfig.forServer(first(tls.getKeyManagers(), "key manager"))
                : TlsConfig.forServer(new ByteArrayInputStream(tls.getCertificateChain()), new ByteArrayInputStream(tls.getPrivateKey()))
                .keyPassword(tls.getPrivateKeyPassword());
        if (tls.getTrustManagers() != null) {
            b.trustManager(first(tls.getTrustManagers(), "trust manager"));
        } else if (tls.getRootCertificates() != null) {
            b.trustRoots(new ByteArrayInputStream(tls.getRootCertificates()));
        }
        return b.clientAuth(switch (tls.getClientAuth()) {
            case NONE -> TlsConfig.ClientAuth.NONE;
            case OPTIONAL -> TlsConfig.ClientAuth.OPTIONAL;
            case REQUIRE -> TlsConfig.ClientAuth.REQUIRE;
        }).build();
    }

    private static <T> T first(List<? extends T> managers, String what) {
        if (managers.isEmpty()) {
            throw new IllegalArgumentException("the TLS credentials hold an empty list of " + what + "s");
        }
        return managers.get(0);
    }
}
