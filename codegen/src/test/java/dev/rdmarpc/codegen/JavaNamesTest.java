package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.Edition;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.FeatureSet;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileOptions;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.JavaFeaturesProto;
import com.google.protobuf.JavaFeaturesProto.JavaFeatures;
import com.google.protobuf.JavaFeaturesProto.JavaFeatures.NestInFileClassFeature.NestInFileClass;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The protoc and grpc-java naming rules, on hand-built descriptors. */
class JavaNamesTest {
    static {
        // Before JavaFeaturesProto, see JavaNames (protocolbuffers/protobuf#23790).
        DescriptorProtos.getDescriptor();
    }

    private static FileDescriptorProto.Builder file(String name) {
        return FileDescriptorProto.newBuilder().setName(name).setSyntax("proto3").setPackage("pkg");
    }

    private static DescriptorProto message(String name) {
        return DescriptorProto.newBuilder().setName(name).build();
    }

    @Test
    void fileNamesCamelCaseLikeProtoc() {
        assertEquals("FooBarBaz", JavaNames.underscoresToCamelCase("foo_bar_baz"));
        assertEquals("FooBar", JavaNames.underscoresToCamelCase("foo-bar"));
        assertEquals("Api2Test", JavaNames.underscoresToCamelCase("api2test"));
        assertEquals("HTTPServer", JavaNames.underscoresToCamelCase("HTTPServer"));
        assertEquals("V1Beta", JavaNames.underscoresToCamelCase("v1.beta"));
    }

    @Test
    void outerClassNameDefaultsToTheFileBaseName() {
        assertEquals("KvStore", JavaNames.outerClassName(file("a/b/kv_store.proto").build()));
        assertEquals("Old", JavaNames.outerClassName(file("old.protodevel").build()));
        assertEquals("Explicit", JavaNames.outerClassName(file("kv_store.proto")
                .setOptions(FileOptions.newBuilder().setJavaOuterClassname("Explicit")).build()));
    }

    @Test
    void outerClassNameGetsASuffixWhenATypeHasTheSameName() {
        assertEquals("FooOuterClass", JavaNames.outerClassName(file("foo.proto").addMessageType(message("Foo")).build()));
        assertEquals("FooOuterClass", JavaNames.outerClassName(file("foo.proto")
                .addMessageType(message("Bar").toBuilder().addNestedType(message("Foo"))).build()));
        assertEquals("FooOuterClass", JavaNames.outerClassName(file("foo.proto")
                .addMessageType(message("Bar").toBuilder().addEnumType(EnumDescriptorProto.newBuilder().setName("Foo"))).build()));
        assertEquals("FooOuterClass", JavaNames.outerClassName(file("foo.proto")
                .addEnumType(EnumDescriptorProto.newBuilder().setName("Foo")).build()));
        assertEquals("FooOuterClass", JavaNames.outerClassName(file("foo.proto")
                .addService(ServiceDescriptorProto.newBuilder().setName("Foo")).build()));
        // Only an exact match counts.
        assertEquals("Foo", JavaNames.outerClassName(file("foo.proto").addMessageType(message("FOO")).build()));
        // An explicit name is used even when it clashes (protoc then reports the clash itself).
        assertEquals("Foo", JavaNames.outerClassName(file("x.proto").addMessageType(message("Foo"))
                .setOptions(FileOptions.newBuilder().setJavaOuterClassname("Foo")).build()));
    }

    @Test
    void edition2024OuterClassNameEndsInProto() {
        FileDescriptorProto f = file("foo.proto").setSyntax("editions").setEdition(Edition.EDITION_2024)
                .addMessageType(message("Foo")).build();
        assertEquals("FooProto", JavaNames.outerClassName(f));
        assertEquals("FooOuterClass", JavaNames.outerClassName(f.toBuilder().setEdition(Edition.EDITION_2023).build()));
    }

    @Test
    void javaPackageFallsBackToTheProtoPackage() {
        assertEquals("pkg", JavaNames.javaPackage(file("a.proto").build()));
        assertEquals("com.example", JavaNames.javaPackage(file("a.proto")
                .setOptions(FileOptions.newBuilder().setJavaPackage("com.example")).build()));
        assertEquals("", JavaNames.javaPackage(file("a.proto").clearPackage().build()));
    }

    @Test
    void typePrefixFollowsMultipleFilesAndNestInFileClass() {
        DescriptorProto m = message("M");
        assertEquals("pkg.A", JavaNames.typePrefix(file("a.proto").build(), m));
        assertEquals("pkg", JavaNames.typePrefix(file("a.proto")
                .setOptions(FileOptions.newBuilder().setJavaMultipleFiles(true)).build(), m));
        assertEquals("A", JavaNames.typePrefix(file("a.proto").clearPackage().build(), m));

        FileDescriptorProto ed = file("a.proto").setSyntax("editions").setEdition(Edition.EDITION_2024).build();
        assertEquals("pkg", JavaNames.typePrefix(ed, m));
        assertEquals("pkg.AProto", JavaNames.typePrefix(ed, nested(m, NestInFileClass.YES)));
        assertEquals("pkg", JavaNames.typePrefix(ed, nested(m, NestInFileClass.NO)));
    }

    private static DescriptorProto nested(DescriptorProto m, NestInFileClass value) {
        FeatureSet features = FeatureSet.newBuilder()
                .setExtension(JavaFeaturesProto.java_, JavaFeatures.newBuilder().setNestInFileClass(value).build())
                .build();
        return m.toBuilder().setOptions(MessageOptions.newBuilder().setFeatures(features)).build();
    }

    @Test
    void methodNamesFollowGrpcJava() {
        for (List<String> c : List.of(
                List.of("BatchPut", "batchPut"),
                List.of("batchPut", "batchPut"),
                List.of("get_all_items", "getAllItems"),
                List.of("Get_all", "getAll"),
                List.of("HTTPGet", "hTTPGet"),
                List.of("Import", "import_"),
                List.of("default", "default_"),
                List.of("Class", "class_"),
                List.of("Null", "null_"),
                List.of("True", "true_"),
                List.of("Stream_", "stream"),
                List.of("Get2", "get2"))) {
            assertEquals(c.get(1), JavaNames.methodName(c.get(0)), c.get(0));
        }
    }

    @Test
    void descriptorGettersFollowGrpcJava() {
        for (List<String> c : List.of(
                List.of("Put", "getPutMethod"),
                List.of("get_stats", "getGetStatsMethod"),
                List.of("hashCode", "getHashCodeMethod"),
                List.of("import", "getImportMethod"),
                List.of("_leading", "getLeadingMethod"),
                List.of("GET_ALL", "getGETALLMethod"),
                List.of("with_2x", "getWith2xMethod"))) {
            assertEquals(c.get(1), JavaNames.descriptorGetterName(c.get(0)), c.get(0));
        }
    }
}
