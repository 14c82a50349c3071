package dev.rdmarpc.codegen.tests;

import dev.rdmarpc.codegen.tests.keywords.BidiRpc;
import dev.rdmarpc.codegen.tests.keywords.ClientStreamingRpc;
import dev.rdmarpc.codegen.tests.keywords.ServerStreamingRpc;
import dev.rdmarpc.codegen.tests.keywords.UnaryRpc;
import dev.rdmarpc.codegen.tests.keywords.Word;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.WithAttachment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * keywords.proto: every Java keyword, literal and contextual keyword as an rpc name, in the four call kinds, with
 * attachment methods. That this module compiles proves the generated code does (LintTest: without a warning); here
 * each generated class has each method, named as grpc-java names it, and the calls that javac rejected before
 * ({@code yield(...)} without a receiver) run.
 */
class KeywordsTest {
    /** The words of keywords.proto, in its order. */
    private static final List<String> WORDS = List.of(("abstract assert boolean break byte case catch char class const"
            + " continue default do double else enum extends final finally float for goto if implements import instanceof"
            + " int interface long native new package private protected public return short static strictfp super switch"
            + " synchronized this throw throws transient try void volatile while _ true false null exports module open"
            + " opens permits provides record requires sealed to transitive uses var when with yield").split(" "));

    /** Keywords and literals get a trailing underscore; contextual keywords stay as they are (as in grpc-java). */
    private static final Set<String> ESCAPED = Set.copyOf(WORDS.subList(0, WORDS.indexOf("exports")));

    private static String javaName(String word) {
        return ESCAPED.contains(word) ? word + "_" : word;
    }

    private static Set<String> names(boolean withAttachments) {
        Set<String> names = new TreeSet<>();
        for (String w : WORDS) {
            names.add(javaName(w));
            if (withAttachments) {
                names.add(w + "WithAttachment");
            }
        }
        return names;
    }

    @Test
    void everyGeneratedClassHasAMethodPerWord() {
        Set<String> plain = names(false);
        Set<String> withTwins = names(true);
        Set<String> base = new TreeSet<>(withTwins);
        base.add("bindService");
        for (Class<?> rpc : List.of(UnaryRpc.class, ServerStreamingRpc.class, ClientStreamingRpc.class, BidiRpc.class)) {
            String service = rpc.getSimpleName().replace("Rpc", "");
            boolean unary = rpc == UnaryRpc.class;
            boolean blocking = unary || rpc == ServerStreamingRpc.class;
            assertEquals(base, publicMethods(nested(rpc, service + "ImplBase")), rpc + " ImplBase");
            assertEquals(withTwins, publicMethods(nested(rpc, service + "Stub")), rpc + " Stub");
            assertEquals(blocking ? plain : Set.of(), publicMethods(nested(rpc, service + "BlockingStub")), rpc + " BlockingStub");
            assertEquals(unary ? plain : Set.of(), publicMethods(nested(rpc, service + "FutureStub")), rpc + " FutureStub");
            long getters = Arrays.stream(rpc.getDeclaredMethods())
                    .filter(m -> Modifier.isStatic(m.getModifiers()) && m.getName().endsWith("Method")).count();
            assertEquals(WORDS.size(), getters, rpc + " descriptor getters");
        }
    }

    private static Class<?> nested(Class<?> c, String simpleName) {
        return Arrays.stream(c.getDeclaredClasses()).filter(n -> n.getSimpleName().equals(simpleName)).findFirst().orElseThrow();
    }

    private static Set<String> publicMethods(Class<?> c) {
        return Arrays.stream(c.getDeclaredMethods()).filter(m -> Modifier.isPublic(m.getModifiers()) && !m.isSynthetic())
                .map(Method::getName).collect(Collectors.toCollection(TreeSet::new));
    }

    private static Word word(String text) {
        return Word.newBuilder().setText(text).build();
    }

    /** Answers each {@code yield} call with the request texts, upper-cased. */
    private static final class Unary extends UnaryRpc.UnaryImplBase {
        @Override
        public void yield(Word request, StreamObserver<Word> responseObserver) {
            responseObserver.onNext(word(request.getText().toUpperCase(java.util.Locale.ROOT)));
            responseObserver.onCompleted();
        }
    }

    private static final class ServerStreaming extends ServerStreamingRpc.ServerStreamingImplBase {
        @Override
        public void yield(Word request, StreamObserver<Word> responseObserver) {
            responseObserver.onNext(word(request.getText()));
            responseObserver.onNext(word(request.getText()));
            responseObserver.onCompleted();
        }
    }

    private static StreamObserver<Word> joining(StreamObserver<Word> responses, boolean eachToo) {
        List<String> texts = new ArrayList<>();
        return new StreamObserver<>() {
            @Override
            public void onNext(Word value) {
                texts.add(value.getText());
                if (eachToo) {
                    responses.onNext(value);
                }
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                responses.onNext(word(String.join("+", texts)));
                responses.onCompleted();
            }
        };
    }

    private static final class ClientStreaming extends ClientStreamingRpc.ClientStreamingImplBase {
        @Override
        public StreamObserver<Word> yield(StreamObserver<Word> responseObserver) {
            return joining(responseObserver, false);
        }
    }

    private static final class Bidi extends BidiRpc.BidiImplBase {
        @Override
        public StreamObserver<Word> yield(StreamObserver<Word> responseObserver) {
            return joining(responseObserver, true);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void yieldRunsInEveryCallKindOverLoopback() throws Exception {
        try (Loopback loopback = Loopback.serve(new Unary(), new ServerStreaming(), new ClientStreaming(), new Bidi())) {
            RpcChannel channel = loopback.channel();
            assertEquals("UP", UnaryRpc.newBlockingStub(channel).yield(word("up")).getText());
            assertEquals("UP", UnaryRpc.newFutureStub(channel).yield(word("up")).get(60, TimeUnit.SECONDS).getText());
            List<String> streamed = new ArrayList<>();
            ServerStreamingRpc.newBlockingStub(channel).yield(word("s")).forEachRemaining(w -> streamed.add(w.getText()));
            assertEquals(List.of("s", "s"), streamed);

            RecordingObserver<Word> joined = new RecordingObserver<>();
            StreamObserver<Word> requests = ClientStreamingRpc.newStub(channel).yield(joined);
            requests.onNext(word("a"));
            requests.onNext(word("b"));
            requests.onCompleted();
            assertEquals(List.of("a+b"), joined.await().stream().map(Word::getText).toList());

            // the attachment twin, served by the plain handler (which the default twin calls as this.yield)
            RecordingObserver<WithAttachment<Word>> echoed = new RecordingObserver<>();
            StreamObserver<WithAttachment<Word>> attached = BidiRpc.newStub(channel).yieldWithAttachment(echoed);
            attached.onNext(WithAttachment.of(word("x")));
            attached.onCompleted();
            assertEquals(List.of("x", "x"), echoed.await().stream().map(w -> w.message().getText()).toList());
        }
    }

    @Test
    void theDefaultAttachmentHandlersCallThePlainOnes() throws Exception {
        RecordingObserver<WithAttachment<Word>> unary = new RecordingObserver<>();
        new Unary().yieldWithAttachment(WithAttachment.of(word("direct")), unary);
        assertEquals(List.of("DIRECT"), unary.await().stream().map(w -> w.message().getText()).toList());

        RecordingObserver<WithAttachment<Word>> bidi = new RecordingObserver<>();
        StreamObserver<WithAttachment<Word>> requests = new Bidi().yieldWithAttachment(bidi);
        requests.onNext(WithAttachment.of(word("p")));
        requests.onCompleted();
        assertEquals(List.of("p", "p"), bidi.await().stream().map(w -> w.message().getText()).toList());
    }
}
