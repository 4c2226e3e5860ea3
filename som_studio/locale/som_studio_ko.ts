<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ko_KR">
<context>
    <name>LanguageMenu</name>
    <message>
        <source>SOM Studio will follow the system&apos;s language from its next start.</source>
        <translation>다음 실행부터 SOM Studio가 시스템 언어를 따릅니다.</translation>
    </message>
    <message>
        <source>SOM Studio will speak {language} from its next start.</source>
        <translation>다음 실행부터 SOM Studio가 {language}로 표시됩니다.</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>언어(&amp;L)</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>시스템 설정 따르기</translation>
    </message>
</context>
</TS>
