package com.alibaba.fastjson;

import com.alibaba.fastjson.serializer.SerializerFeature;
import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Stand-in for fastjson's JSON facade, backed by Jackson (shipped with pyspark). */
public final class JSON {
    private static final ObjectMapper MAPPER = new ObjectMapper()
        .configure(SerializationFeature.FAIL_ON_EMPTY_BEANS, false)
        .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
        .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

    private JSON() { }

    public static String toJSONString(Object obj) {
        try {
            return MAPPER.writeValueAsString(obj);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public static String toJSONString(Object obj, boolean prettyFormat) { return toJSONString(obj); }

    public static String toJSONString(Object obj, SerializerFeature... features) { return toJSONString(obj); }

    public static byte[] toJSONBytes(Object obj, SerializerFeature... features) {
        return toJSONString(obj).getBytes(StandardCharsets.UTF_8);
    }

    public static <T> T parseObject(String json, Class<T> cls) {
        try {
            return MAPPER.readValue(json, cls);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public static <T> T parseObject(byte[] data, Class<T> cls) {
        return parseObject(new String(data, StandardCharsets.UTF_8), cls);
    }

    public static <T> List<T> parseArray(String json, Class<T> cls) {
        try {
            return MAPPER.readValue(json, MAPPER.getTypeFactory().constructCollectionType(List.class, cls));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
