package com.alibaba.fastjson.serializer;

/** Stand-in for fastjson's SerializerFeature (ignored by the Jackson-backed JSON stand-in). */
public enum SerializerFeature { PrettyFormat, WriteMapNullValue, DisableCircularReferenceDetect, SortField, MapSortField }
