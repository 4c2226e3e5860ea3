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
<context>
    <name>MapInspector</name>
    <message>
        <source>Its codebook, hits and examples show when the run ends.</source>
        <translation>코드북, 히트, 샘플은 실행이 끝나면 표시됩니다.</translation>
    </message>
    <message>
        <source>Finding its examples…</source>
        <translation>샘플을 찾는 중…</translation>
    </message>
    <message>
        <source>Its examples&apos; rows are not known: the run&apos;s data cannot be read again.</source>
        <translation>샘플의 행을 알 수 없습니다: 이 실행의 데이터를 다시 읽을 수 없습니다.</translation>
    </message>
</context>
<context>
    <name>MapView</name>
    <message>
        <source>drawing…</source>
        <translation>그리는 중…</translation>
    </message>
    <message>
        <source>Cannot draw this view: {error}</source>
        <translation>이 보기를 그릴 수 없습니다: {error}</translation>
    </message>
</context>
<context>
    <name>UnitPanel</name>
    <message>
        <source>Close the unit&apos;s details</source>
        <translation>유닛 상세 정보 닫기</translation>
    </message>
    <message>
        <source>Codebook</source>
        <translation>코드북</translation>
    </message>
    <message>
        <source>Hits: {n}</source>
        <translation>히트: {n}</translation>
    </message>
    <message>
        <source>(no examples)</source>
        <translation>(샘플 없음)</translation>
    </message>
    <message>
        <source>Label: {label} (purity {purity:.2f})</source>
        <translation>레이블: {label} (순도 {purity:.2f})</translation>
    </message>
    <message>
        <source>Label: {label}</source>
        <translation>레이블: {label}</translation>
    </message>
    <message>
        <source>Cluster: {k}</source>
        <translation>클러스터: {k}</translation>
    </message>
    <message>
        <source>Labels of its examples</source>
        <translation>샘플의 레이블</translation>
    </message>
    <message>
        <source>Example rows ({n})</source>
        <translation>샘플 행 ({n})</translation>
    </message>
</context>
</TS>
