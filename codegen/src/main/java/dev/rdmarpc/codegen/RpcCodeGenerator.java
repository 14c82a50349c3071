package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos;
import com.google.protobuf.DescriptorProtos.Edition;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.ExtensionRegistry;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.JavaFeaturesProto;
import com.google.protobuf.compiler.PluginProtos.CodeGeneratorRequest;
import com.google.protobuf.compiler.PluginProtos.CodeGeneratorResponse;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The protoc plugin: reads a {@code CodeGeneratorRequest} from standard input and writes a
 * {@code CodeGeneratorResponse} with one {@code <Service>Rpc} class per service of each file to
 * generate. Problems with the input are reported in the response's {@code error} field, as protoc
 * expects; the process then still exits with status 0.
 */
public final class RpcCodeGenerator {

    /** Proto3 optional fields change nothing for services; editions are handled by {@link JavaNames}. */
    private static final long SUPPORTED_FEATURES = CodeGeneratorResponse.Feature.FEATURE_PROTO3_OPTIONAL_VALUE
            | CodeGeneratorResponse.Feature.FEATURE_SUPPORTS_EDITIONS_VALUE;

    /** The newest edition whose Java naming rules {@link JavaNames} implements. */
    private static final int MAXIMUM_EDITION = Edition.EDITION_2024_VALUE;

    private RpcCodeGenerator() {
    }

    /** Runs the plugin on standard input and output; exits with status 1 only if those fail. */
    public static void main(String[] args) {
        try {
            run(System.in, System.out);
        } catch (IOException e) {
            System.err.println("rdmarpc codegen: cannot read the request or write the response: " + e);
            System.exit(1);
        }
    }

    /**
     * Reads one request from {@code in} and writes its response to {@code out}. The request is
     * parsed with the Java features extension registered, so edition 2024 message features are seen.
     */
    public static void run(InputStream in, OutputStream out) throws IOException {
        byte[] bytes = in.readAllBytes();
        CodeGeneratorResponse response;
        try {
            response = generate(CodeGeneratorRequest.parseFrom(bytes, javaFeaturesRegistry()));
        } catch (InvalidProtocolBufferException e) {
            response = error("cannot parse the CodeGeneratorRequest: " + e.getMessage());
        } catch (RuntimeException | LinkageError e) {
            response = error("internal error in the rdmarpc code generator: " + stackTrace(e));
        }
        response.writeTo(out);
        out.flush();
    }

    /**
     * A registry holding {@code pb.java}. DescriptorProtos must be initialized before
     * JavaFeaturesProto: initializing JavaFeaturesProto first makes DescriptorProtos' static
     * initializer read the not yet assigned extension and fail (protocolbuffers/protobuf#23790).
     */
    private static ExtensionRegistry javaFeaturesRegistry() {
        DescriptorProtos.getDescriptor();
        ExtensionRegistry registry = ExtensionRegistry.newInstance();
        JavaFeaturesProto.registerAllExtensions(registry);
        return registry;
    }

    private static String stackTrace(Throwable t) {
        StringWriter trace = new StringWriter();
        t.printStackTrace(new PrintWriter(trace));
        return trace.toString();
    }

    /** Generates the response to a request; never throws, failures become the response's error. */
    public static CodeGeneratorResponse generate(CodeGeneratorRequest request) {
        try {
            return generateOrThrow(request);
        } catch (CodeGenerationException e) {
            return error(e.getMessage());
        } catch (RuntimeException e) {
            return error("internal error in the rdmarpc code generator: " + stackTrace(e));
        }
    }

    private static CodeGeneratorResponse generateOrThrow(CodeGeneratorRequest request) {
        PluginOptions options = new PluginOptions(request.getParameter());
        List<FileDescriptorProto> files = request.getProtoFileList();
        MessageTypes types = new MessageTypes(files);
        Map<String, FileDescriptorProto> byName = new HashMap<>();
        for (FileDescriptorProto f : files) {
            byName.put(f.getName(), f);
        }
        CodeGeneratorResponse.Builder response = CodeGeneratorResponse.newBuilder()
                .setSupportedFeatures(SUPPORTED_FEATURES)
                .setMinimumEdition(Edition.EDITION_PROTO2_VALUE)
                .setMaximumEdition(MAXIMUM_EDITION);
        for (String name : request.getFileToGenerateList()) {
            FileDescriptorProto file = byName.get(name);
            if (file == null) {
                throw new CodeGenerationException("protoc asked for " + name + " but did not pass its descriptor");
            }
            Comments comments = new Comments(file);
            for (int i = 0; i < file.getServiceCount(); i++) {
                ServiceGenerator generator = new ServiceGenerator(new ServiceClass(file, i, types, comments, options));
                response.addFileBuilder()
                        .setName(generator.fileName())
                        .setContent(generator.generate());
            }
        }
        options.requireAllMatched();
        return response.build();
    }

    private static CodeGeneratorResponse error(String message) {
        return CodeGeneratorResponse.newBuilder()
                .setSupportedFeatures(SUPPORTED_FEATURES)
                .setMinimumEdition(Edition.EDITION_PROTO2_VALUE)
                .setMaximumEdition(MAXIMUM_EDITION)
                .setError(message)
                .build();
    }
}
