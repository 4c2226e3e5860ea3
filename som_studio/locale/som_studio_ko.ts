<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ko_KR">
<context>
    <name>App</name>
    <message>
        <source>The app goes on; the details were printed on the terminal.</source>
        <translation>앱은 계속 실행됩니다. 자세한 내용은 터미널에 출력했습니다.</translation>
    </message>
    <message>
        <source>Unexpected error</source>
        <translation>예기치 않은 오류</translation>
    </message>
</context>
<context>
    <name>ColumnChooser</name>
    <message>
        <source>Drag a heading to move its column; right-click to hide or show columns</source>
        <translation>머리글을 끌어 열을 옮기고, 오른쪽 클릭으로 열을 숨기거나 표시합니다</translation>
    </message>
    <message>
        <source>Columns</source>
        <translation>열</translation>
    </message>
</context>
<context>
    <name>CompareQueue</name>
    <message>
        <source>Comparison cancelled</source>
        <translation>비교를 취소했습니다</translation>
    </message>
    <message>
        <source>Comparing: {impl} ({n} of {total})</source>
        <translation>비교 중: {impl} ({total}개 중 {n}번째)</translation>
    </message>
    <message>
        <source>Compared {n} run(s)</source>
        <translation>실행 {n}개를 비교했습니다</translation>
    </message>
    <message>
        <source>skipped {runs}</source>
        <translation>건너뜀: {runs}</translation>
    </message>
</context>
<context>
    <name>ComparisonView</name>
    <message>
        <source>Final maps</source>
        <translation>최종 지도</translation>
    </message>
    <message>
        <source>Time per iteration</source>
        <translation>반복당 시간</translation>
    </message>
    <message>
        <source>Quality</source>
        <translation>품질</translation>
    </message>
    <message>
        <source>Tick runs in the Runs list to compare them, or tick implementations and press Compare.</source>
        <translation>실행 목록에서 비교할 실행을 체크하거나, 구현을 체크하고 비교를 누르세요.</translation>
    </message>
    <message>
        <source>No suspect numbers: no recompiles after warm-up, steady iterations (p95 within {ratio}x the median), the same configuration for every run.</source>
        <translation>의심스러운 수치가 없습니다: 워밍업 후 재컴파일 없음, 반복 시간 안정 (p95가 중앙값의 {ratio}x 이내), 모든 실행의 설정 동일.</translation>
    </message>
    <message>
        <source>Warning:</source>
        <translation>경고:</translation>
    </message>
    <message>
        <source>Note:</source>
        <translation>참고:</translation>
    </message>
    <message>
        <source>Data: {data}</source>
        <translation>데이터: {data}</translation>
    </message>
    <message>
        <source>Settings that differ: {settings}</source>
        <translation>다른 설정: {settings}</translation>
    </message>
    <message>
        <source>Tick runs to compare them (the Runs tab lists them in full)</source>
        <extracomment>The most runs the page&apos;s timing and quality legends list to a line (the exported report&apos;s take four).</extracomment>
        <translation>비교할 실행을 체크하세요 (실행 탭에 전체 목록이 있습니다)</translation>
    </message>
    <message>
        <source>Runs (tick to compare)</source>
        <translation>실행 (체크하면 비교)</translation>
    </message>
    <message>
        <source>Speed-ups are the baseline&apos;s median time per iteration over each run&apos;s, within a kind (an epoch for batch runs, a step for online ones)</source>
        <translation>속도 향상은 같은 종류 안에서 기준의 반복당 중앙값 시간을 각 실행의 값으로 나눈 것입니다 (배치 실행은 에폭, 온라인 실행은 스텝 기준)</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>내보내기</translation>
    </message>
    <message>
        <source>Baseline:</source>
        <translation>기준:</translation>
    </message>
    <message>
        <source>&amp;Export comparison</source>
        <translation>비교 내보내기(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Compare</source>
        <translation>비교(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Compare ticked implementations</source>
        <translation>체크한 구현 비교(&amp;C)</translation>
    </message>
    <message>
        <source>Ca&amp;ncel comparison</source>
        <translation>비교 취소(&amp;N)</translation>
    </message>
    <message>
        <source>tick the implementations to compare</source>
        <translation>비교할 구현을 체크하세요</translation>
    </message>
    <message>
        <source>the Run panel&apos;s configuration is not runnable; fix it first</source>
        <translation>실행 패널의 설정으로는 실행할 수 없습니다. 먼저 설정을 고치세요</translation>
    </message>
    <message>
        <source>Cannot compare</source>
        <translation>비교할 수 없습니다</translation>
    </message>
    <message>
        <source>NumPy run of each kind (default)</source>
        <translation>종류별 NumPy 실행 (기본값)</translation>
    </message>
    <message>
        <source>Nothing ticked.</source>
        <translation>체크한 실행이 없습니다.</translation>
    </message>
    <message>
        <source>Nothing to export</source>
        <translation>내보낼 것이 없습니다</translation>
    </message>
    <message>
        <source>Tick the runs to compare first.</source>
        <translation>먼저 비교할 실행을 체크하세요.</translation>
    </message>
    <message>
        <source>Folder for the final maps</source>
        <translation>최종 지도를 저장할 폴더</translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation>내보내기 실패</translation>
    </message>
    <message>
        <source>Wrote {path}</source>
        <translation>{path}에 저장했습니다</translation>
    </message>
    <message>
        <source>The PDF cannot show its Korean</source>
        <translation>PDF에 한국어를 표시할 수 없음</translation>
    </message>
    <message>
        <source>none of the ticked runs has a final map</source>
        <translation>체크한 실행 중 최종 지도가 있는 실행이 없습니다</translation>
    </message>
    <message>
        <source>{n} map(s) to {folder}</source>
        <translation>지도 {n}개 → {folder}</translation>
    </message>
</context>
<context>
    <name>Dialogs</name>
    <message>
        <source>not installed</source>
        <translation>설치되지 않음</translation>
    </message>
    <message>
        <source>asking a worker process…</source>
        <translation>워커 프로세스에 묻는 중…</translation>
    </message>
    <message>
        <source>unavailable ({error})</source>
        <translation>사용할 수 없음 ({error})</translation>
    </message>
    <message>
        <source>{backend} — {n} device(s): {kinds}, {memory} each</source>
        <translation>{backend} — 장치 {n}개: {kinds}, 각 {memory}</translation>
    </message>
    <message>
        <source>{backend} — {n} device(s): {kinds}</source>
        <translation>{backend} — 장치 {n}개: {kinds}</translation>
    </message>
    <message>
        <source>Self-organizing maps from NumPy to fused, sharded JAX, timed honestly and watched live.</source>
        <translation>NumPy부터 퓨전·샤딩된 JAX까지, 자기 조직화 지도를 정직하게 측정하고 실시간으로 지켜봅니다.</translation>
    </message>
    <message>
        <source>JAX backend</source>
        <translation>JAX 백엔드</translation>
    </message>
    <message>
        <source>About SOM Studio</source>
        <translation>SOM Studio 정보</translation>
    </message>
</context>
<context>
    <name>DoctorDialog</name>
    <message>
        <source>Checking the environment (starting JAX and asking {tool} in a separate process)…</source>
        <translation>환경을 점검하는 중입니다 (별도 프로세스에서 JAX를 시작하고 {tool}에 묻는 중)…</translation>
    </message>
    <message>
        <source>Environment doctor</source>
        <translation>환경 진단</translation>
    </message>
    <message>
        <source>What {command} reports for this machine: versions, the JAX backend and devices, the GPU driver, memory settings and the display, with fixes for what is wrong.</source>
        <translation>이 컴퓨터에 대한 {command} 보고서입니다: 버전, JAX 백엔드와 장치, GPU 드라이버, 메모리 설정, 디스플레이, 그리고 문제가 있으면 해결 방법.</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>복사</translation>
    </message>
    <message>
        <source>Copy the report to the clipboard (to paste it into a bug report)</source>
        <translation>보고서를 클립보드에 복사합니다 (버그 리포트에 붙여 넣을 때)</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>다시 점검</translation>
    </message>
    <message>
        <source>The doctor could not finish: {error}

Run {command} in a terminal.</source>
        <translation>진단을 끝내지 못했습니다: {error}

터미널에서 {command}를 실행하세요.</translation>
    </message>
    <message>
        <source>no answer</source>
        <translation>응답 없음</translation>
    </message>
</context>
<context>
    <name>EmptyStates</name>
    <message>
        <source>The time per iteration appears here once a run starts: each timed chunk and their rolling median, with the compile and warm-up time kept apart.</source>
        <translation>실행이 시작되면 반복당 시간이 여기에 표시됩니다: 청크별 시간과 이동 중앙값, 그리고 따로 보이는 컴파일 및 워밍업 시간.</translation>
    </message>
    <message>
        <source>The map&apos;s quality appears here as the run is measured: its quantization error (QE) and topographic error (TE) at regular iterations.</source>
        <translation>실행 중 측정한 지도의 품질이 여기에 표시됩니다: 일정한 반복 간격의 양자화 오차(QE)와 위상 오차(TE).</translation>
    </message>
    <message>
        <source>No runs yet. Every run you start (Run, {run}), compare (the Compare page) or open (File &gt; Open run…, {open}) is kept here, and is still here at the next start.</source>
        <translation>아직 실행이 없습니다. 시작한 실행(실행, {run}), 비교한 실행(비교 페이지), 연 실행(파일 &gt; 실행 열기…, {open})이 모두 여기에 보관되며, 다음에 시작해도 그대로 있습니다.</translation>
    </message>
    <message>
        <source>hexagonal</source>
        <translation>육각형</translation>
    </message>
    <message>
        <source>rectangular</source>
        <translation>사각형</translation>
    </message>
    <message>
        <source>Run will train {impl} on a {grid} {lattice} map of {data}.</source>
        <translation>실행하면 {impl} 구현이 {data}(으)로 {grid} {lattice} 지도를 학습합니다.</translation>
    </message>
    <message>
        <source>Press {shortcut} or click Run in the Run panel. Change the implementation, the map or the data there first, or open a table (File &gt; Open data…, {open_data}) or the iris example.</source>
        <translation>{shortcut}을 누르거나 실행 패널의 실행 단추를 누르세요. 먼저 그곳에서 구현, 지도, 데이터를 바꾸거나, 표(파일 &gt; 데이터 열기…, {open_data})나 iris 예제를 열 수 있습니다.</translation>
    </message>
    <message>
        <source>Nothing to show yet: the Run panel cannot run its configuration.</source>
        <translation>아직 보여 줄 것이 없습니다: 실행 패널의 설정으로는 실행할 수 없습니다.</translation>
    </message>
    <message>
        <source>It says what to change: {reason}</source>
        <translation>무엇을 바꿔야 하는지 알려 줍니다: {reason}</translation>
    </message>
</context>
<context>
    <name>GraphicsScene</name>
    <message>
        <source>Export...</source>
        <translation>내보내기...</translation>
    </message>
</context>
<context>
    <name>ImplementationPicker</name>
    <message>
        <source>Tick implementations in the order they should run.</source>
        <translation>실행할 순서대로 구현을 체크하세요.</translation>
    </message>
    <message>
        <source>Compare implementations</source>
        <translation>구현 비교</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>비교</translation>
    </message>
    <message>
        <source>Run the ticked implementations one after another on the Run panel&apos;s configuration (same data, seed and schedules)</source>
        <translation>체크한 구현을 실행 패널의 설정으로 차례로 실행합니다 (같은 데이터, 시드, 스케줄)</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
    <message>
        <source>Runs in the order ticked: {order}</source>
        <translation>체크한 순서로 실행: {order}</translation>
    </message>
    <message>
        <source>A run is in progress: compare when it has ended</source>
        <translation>실행이 진행 중입니다. 끝난 뒤에 비교하세요</translation>
    </message>
</context>
<context>
    <name>InsideView</name>
    <message>
        <source>arithmetic intensity (FLOPs per byte)</source>
        <translation>산술 강도 (바이트당 FLOPs)</translation>
    </message>
    <message>
        <source>achieved GFLOP/s</source>
        <translation>달성한 GFLOP/s</translation>
    </message>
    <message>
        <source>float32 matmul: {v:.3g} GFLOP/s</source>
        <translation>float32 행렬 곱: {v:.3g} GFLOP/s</translation>
    </message>
    <message>
        <source>memory: {v:.3g} GB/s</source>
        <translation>메모리: {v:.3g} GB/s</translation>
    </message>
    <message>
        <source>The roofline of the runs ticked in the run list appears here: for each run, the FLOP/s it achieved against its arithmetic intensity (FLOPs per byte), under the device&apos;s float32 matmul and memory ceilings, with what bounds it and the program XLA compiled.

A run shows here when it recorded its inside: tick Record the inside of the next runs above and run it, or run `som-studio bench --inside --keep-programs --save-runs DIR` (or `som-studio explain`) and open the runs with File &gt; Open run…</source>
        <translation>실행 목록에서 체크한 실행들의 루프라인이 여기에 나타납니다: 각 실행이 산술 강도(바이트당 FLOPs)에 대해 달성한 FLOP/s를, 장치의 float32 행렬 곱 천장과 메모리 천장 아래에, 무엇이 제약하는지와 XLA가 컴파일한 프로그램과 함께 보여 줍니다.

내부를 기록한 실행이 여기에 나옵니다: 위의 다음 실행들의 내부 기록을 체크하고 실행하거나, `som-studio bench --inside --keep-programs --save-runs DIR`(또는 `som-studio explain`)을 실행하고 파일 &gt; 실행 열기…로 그 실행들을 여세요.</translation>
    </message>
    <message>
        <source>Record the inside of the next runs</source>
        <translation>다음 실행들의 내부 기록</translation>
    </message>
    <message>
        <source>After each run&apos;s timed iterations, compile its program once more and keep what XLA made of it (its texts too: a kept run grows by their size) and the device&apos;s ceilings (measured once)</source>
        <translation>각 실행의 시간을 잰 반복이 끝난 뒤 그 프로그램을 한 번 더 컴파일하여 XLA가 만든 것(텍스트도 포함: 보관한 실행이 그 크기만큼 커집니다)과 장치의 천장(한 번만 측정)을 보관합니다</translation>
    </message>
    <message>
        <source>optimized HLO</source>
        <translation>최적화된 HLO</translation>
    </message>
    <message>
        <source>StableHLO</source>
        <translation>StableHLO</translation>
    </message>
    <message>
        <source>jaxpr</source>
        <translation>jaxpr</translation>
    </message>
    <message>
        <source>Source: {links}</source>
        <translation>소스: {links}</translation>
    </message>
    <message>
        <source>No program text kept with these runs: record them with `som-studio bench --inside --keep-programs`, or write one with `som-studio explain --hlo FILE`.</source>
        <translation>이 실행들에는 보관된 프로그램 텍스트가 없습니다: `som-studio bench --inside --keep-programs`로 기록하거나 `som-studio explain --hlo FILE`로 쓰세요.</translation>
    </message>
</context>
<context>
    <name>LanguageMenu</name>
    <message>
        <source>The language choice could not be remembered: the settings file was written by a newer SOM Studio and is left as it is. Start SOM Studio with --lang {code} to choose it.</source>
        <translation>언어 선택을 저장하지 못했습니다: 설정 파일을 더 새로운 SOM Studio가 썼기 때문에 그대로 둡니다. 이 언어로 쓰려면 SOM Studio를 --lang {code}로 시작하세요.</translation>
    </message>
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
    <name>LiveViews</name>
    <message>
        <source>Ready</source>
        <extracomment>The status bar&apos;s clock and progress bar follow the run this often, not with each batch of chunks: each change repaints part of the status bar, and a clock of seconds says nothing new more often.</extracomment>
        <translation>준비됨</translation>
    </message>
    <message>
        <source>its figures are on the Sweep page</source>
        <translation>그 수치는 스윕 페이지에 있습니다</translation>
    </message>
    <message>
        <source>a sweep</source>
        <translation>스윕</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>일시 정지됨</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>중지하는 중…</translation>
    </message>
    <message>
        <source>A run is in progress: its views are live; show kept runs after it</source>
        <translation>실행 중입니다. 화면은 실시간으로 갱신됩니다. 저장된 실행은 끝난 뒤에 보세요</translation>
    </message>
    <message>
        <source>{name} (kept run): iteration {n:,}</source>
        <translation>{name} (저장된 실행): 반복 {n:,}</translation>
    </message>
    <message>
        <source>took {seconds} s</source>
        <translation>걸린 시간 {seconds} s</translation>
    </message>
    <message>
        <source>Showing {name} ({impl}, {status}) from the run list</source>
        <translation>실행 목록의 {name} ({impl}, {status}) 표시 중</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>The run failed</source>
        <extracomment>Training seconds after which a run measures its quality again, between its planned points (within their budget).</extracomment>
        <translation>실행 실패</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>실행</translation>
    </message>
    <message>
        <source>Timings</source>
        <translation>시간</translation>
    </message>
    <message>
        <source>Quality</source>
        <translation>품질</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>실행 목록</translation>
    </message>
    <message>
        <source>Sharding</source>
        <translation>샤딩</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>비교</translation>
    </message>
    <message>
        <source>Inside</source>
        <translation>내부</translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation>스윕</translation>
    </message>
    <message>
        <source>Map</source>
        <translation>지도</translation>
    </message>
    <message>
        <source>Every kept run, and what to do with it</source>
        <translation>보관된 모든 실행과 그 실행으로 할 수 있는 일</translation>
    </message>
    <message>
        <source>The ticked runs, compared</source>
        <translation>체크한 실행의 비교</translation>
    </message>
    <message>
        <source>Which device holds which part of the map</source>
        <translation>어느 장치가 지도의 어느 부분을 맡는지</translation>
    </message>
    <message>
        <source>Choose a table (.csv, .npy, .parquet or .arrow) for the Run panel&apos;s data</source>
        <translation>실행 패널의 데이터로 쓸 표(.csv, .npy, .parquet, .arrow)를 고릅니다</translation>
    </message>
    <message>
        <source>Choose a folder of tables, one format, read in file-name order (streamed when too large)</source>
        <translation>한 형식의 표들이 든 폴더를 고릅니다. 파일 이름 순서로 읽으며, 너무 크면 스트리밍합니다</translation>
    </message>
    <message>
        <source>Open data &amp;folder…</source>
        <translation>데이터 폴더 열기(&amp;F)…</translation>
    </message>
    <message>
        <source>Many maps of the form&apos;s SOM, trained together</source>
        <translation>실행 패널의 SOM으로 여러 지도를 함께 학습</translation>
    </message>
    <message>
        <source>What JAX made of the ticked runs</source>
        <translation>선택한 실행에서 JAX가 만든 프로그램</translation>
    </message>
    <message>
        <source>Some kept runs could not be read: {problems}</source>
        <translation>저장된 실행 일부를 읽지 못했습니다: {problems}</translation>
    </message>
    <message>
        <source>The saved layout left the map too little room: the default layout is used</source>
        <translation>저장된 창 배치에서는 지도가 너무 작아 기본 배치를 씁니다</translation>
    </message>
    <message>
        <source>Cannot start the run</source>
        <translation>실행을 시작할 수 없습니다</translation>
    </message>
    <message>
        <source>Starting the training process failed: {error}</source>
        <translation>학습 프로세스를 시작하지 못했습니다: {error}</translation>
    </message>
    <message>
        <source>Its saved configuration is not valid: {error}</source>
        <translation>저장된 설정이 올바르지 않습니다: {error}</translation>
    </message>
    <message>
        <source>not runnable</source>
        <translation>실행할 수 없음</translation>
    </message>
    <message>
        <source>a run is already in progress</source>
        <translation>이미 실행 중입니다</translation>
    </message>
    <message>
        <source>&amp;Resume</source>
        <translation>재개(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>일시 정지(&amp;P)</translation>
    </message>
    <message>
        <source>Cannot run: {reason}</source>
        <translation>실행할 수 없습니다: {reason}</translation>
    </message>
    <message>
        <source>Run this configuration ({shortcut})</source>
        <translation>이 설정으로 실행 ({shortcut})</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>준비됨</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>실행(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Stop</source>
        <translation>중지(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Open run…</source>
        <translation>실행 열기(&amp;O)…</translation>
    </message>
    <message>
        <source>The ticked runs&apos; full records (all kept runs when none is ticked)</source>
        <translation>체크한 실행의 전체 기록 (체크한 실행이 없으면 저장된 모든 실행)</translation>
    </message>
    <message>
        <source>&amp;Export runs as JSON…</source>
        <translation>실행을 JSON으로 내보내기(&amp;E)…</translation>
    </message>
    <message>
        <source>Open &amp;data…</source>
        <translation>데이터 열기(&amp;D)…</translation>
    </message>
    <message>
        <source>Put the window&apos;s panels back where they start, the map the largest</source>
        <translation>창의 패널을 처음 자리로 되돌립니다. 지도가 가장 크게 보입니다</translation>
    </message>
    <message>
        <source>&amp;Reset layout</source>
        <translation>창 배치 초기화(&amp;R)</translation>
    </message>
    <message>
        <source>{name}: a hex map, ready to run</source>
        <translation>{name}: 육각형 지도, 바로 실행 가능</translation>
    </message>
    <message>
        <source>Open e&amp;xample data</source>
        <translation>예제 데이터 열기(&amp;X)</translation>
    </message>
    <message>
        <source>Run your own implementation, a class in a Python file, beside the built-in ones</source>
        <translation>직접 만든 구현(Python 파일 안의 클래스)을 내장 구현과 나란히 실행합니다</translation>
    </message>
    <message>
        <source>Add &amp;implementation…</source>
        <translation>구현 추가(&amp;I)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>종료(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;About SOM Studio</source>
        <translation>SOM Studio 정보(&amp;A)</translation>
    </message>
    <message>
        <source>Check Python, JAX, the GPU driver, memory settings and the display ({command})</source>
        <translation>Python, JAX, GPU 드라이버, 메모리 설정, 디스플레이를 점검합니다 ({command})</translation>
    </message>
    <message>
        <source>Environment &amp;doctor…</source>
        <translation>환경 진단(&amp;D)…</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>파일(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>보기(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>도움말(&amp;H)</translation>
    </message>
    <message>
        <source>Stopping the run, then closing…</source>
        <translation>실행을 멈춘 뒤 닫는 중…</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>언어</translation>
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
        <source>No run yet</source>
        <extracomment>The share of one core that drawing live frames may take (a frame&apos;s whole cost: setting the picture, painting it, its caption and the copy to the display, in the process&apos;s CPU time): a frame that costs more waits longer, and the worker is asked for no more frames than are drawn. On a machine whose cores all train, the app&apos;s CPU time is the training&apos;s: 1 % gives the playbook map 5-7 frames a second under Xvfb (1.5-2.4 ms a frame, 1280x800 to 1920x1080). ... but the map still moves: at least 5 frames a second, whatever a frame costs (under load here a frame took 2.3-2.8 ms, which 1 % alone would draw 4 times a second). While the map is hidden (another page in front) the worker sends a frame this often: the newest is drawn when the map is shown again. A frame interval asked of the worker is asked again only when it changed by more than this factor. The least seconds between frames worth sending to this view now (its draws&apos; cost, or hidden).</extracomment>
        <translation>아직 실행 없음</translation>
    </message>
    <message>
        <source>Cluster borders</source>
        <translation>클러스터 경계</translation>
    </message>
    <message>
        <source>Draw the borders between the map&apos;s clusters over the view shown</source>
        <translation>보이는 뷰 위에 지도의 클러스터 경계를 그립니다</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>표시</translation>
    </message>
    <message>
        <source>Drawn once the map has clusters: a run on a data file with Clusters set in the Run panel has them when it ends</source>
        <translation>지도에 클러스터가 생기면 그립니다: 실행 패널에서 클러스터를 정하고 데이터 파일로 한 실행은 끝날 때 클러스터가 생깁니다</translation>
    </message>
    <message>
        <source>iteration {n:,} (the new view shows from the next frame)</source>
        <translation>반복 {n:,} (새 보기는 다음 프레임부터 표시됩니다)</translation>
    </message>
    <message>
        <source>drawing…</source>
        <translation>그리는 중…</translation>
    </message>
    <message>
        <source>Cannot draw this view: {error}</source>
        <translation>이 보기를 그릴 수 없습니다: {error}</translation>
    </message>
    <message>
        <source>iteration {n:,}</source>
        <translation>반복 {n:,}</translation>
    </message>
    <message>
        <source>The first {shown} of {n:,} feature planes. Any one is drawn whole under Feature plane.</source>
        <translation>특성 평면 {n:,}개 중 처음 {shown}개입니다. 어느 평면이든 &apos;특성 평면&apos;에서 전체를 볼 수 있습니다.</translation>
    </message>
</context>
<context>
    <name>PlotItem</name>
    <message>
        <source>Plot Options</source>
        <translation>플롯 옵션</translation>
    </message>
    <message>
        <source>Transforms</source>
        <translation>변환</translation>
    </message>
    <message>
        <source>Downsample</source>
        <translation>다운샘플</translation>
    </message>
    <message>
        <source>Average</source>
        <translation>평균</translation>
    </message>
    <message>
        <source>Alpha</source>
        <translation>투명도</translation>
    </message>
    <message>
        <source>Grid</source>
        <translation>격자선</translation>
    </message>
    <message>
        <source>Points</source>
        <translation>점</translation>
    </message>
</context>
<context>
    <name>ProgramText</name>
    <message>
        <source>Search the program (e.g. fusion, while, dot, all-reduce)</source>
        <translation>프로그램 검색 (예: fusion, while, dot, all-reduce)</translation>
    </message>
    <message>
        <source>(module)</source>
        <translation>(모듈)</translation>
    </message>
    <message>
        <source>{n} computations</source>
        <translation>계산 {n}개</translation>
    </message>
    <message>
        <source>{n} computations match</source>
        <translation>일치하는 계산 {n}개</translation>
    </message>
</context>
<context>
    <name>ProjectData</name>
    <message>
        <source>Hits of the new data</source>
        <translation>새 데이터의 히트</translation>
    </message>
    <message>
        <source>Project data…</source>
        <translation>데이터 투영…</translation>
    </message>
    <message>
        <source>Where the rows of another file land on the selected run&apos;s map (its hit map)</source>
        <translation>다른 파일의 행이 선택한 실행의 지도 어디에 놓이는지 봅니다 (히트 맵)</translation>
    </message>
    <message>
        <source>Export units…</source>
        <translation>유닛 내보내기…</translation>
    </message>
    <message>
        <source>A CSV with one line per unit: hits, label, purity, cluster, codebook</source>
        <translation>유닛마다 한 줄인 CSV: 히트, 레이블, 순도, 클러스터, 코드북</translation>
    </message>
    <message>
        <source>Data ({patterns});;All files (*)</source>
        <translation>데이터 ({patterns});;모든 파일 (*)</translation>
    </message>
    <message>
        <source>Data to project on {name}</source>
        <translation>{name}에 투영할 데이터</translation>
    </message>
    <message>
        <source>Projecting {file} on {name}…</source>
        <translation>{file}을(를) {name}에 투영하는 중…</translation>
    </message>
    <message>
        <source>Cannot project the data</source>
        <translation>데이터를 투영할 수 없습니다</translation>
    </message>
    <message>
        <source>Units of {name}</source>
        <translation>{name}의 유닛</translation>
    </message>
    <message>
        <source>Cannot export the units</source>
        <translation>유닛을 내보낼 수 없습니다</translation>
    </message>
    <message>
        <source>Wrote {path}</source>
        <translation>{path}에 저장했습니다</translation>
    </message>
</context>
<context>
    <name>QAbstractFileIconProvider</name>
    <message>
        <source>Drive</source>
        <translation>드라이브</translation>
    </message>
</context>
<context>
    <name>QFileDialog</name>
    <message>
        <source>&amp;Look in:</source>
        <translation>찾는 위치(&amp;L):</translation>
    </message>
    <message>
        <source>Files of &amp;type:</source>
        <translation>파일 형식(&amp;T):</translation>
    </message>
</context>
<context>
    <name>QualityPlot</name>
    <message>
        <source>No run yet</source>
        <translation>아직 실행 없음</translation>
    </message>
    <message>
        <source>iteration</source>
        <translation>반복</translation>
    </message>
    <message>
        <source>quantization error</source>
        <translation>양자화 오차</translation>
    </message>
    <message>
        <source>topographic error</source>
        <translation>위상 오차</translation>
    </message>
    <message>
        <source>waiting for the first measurement…</source>
        <translation>첫 측정을 기다리는 중…</translation>
    </message>
    <message>
        <source>no quality measured: the run ended before its first measurement</source>
        <translation>품질 측정 없음: 첫 측정 전에 실행이 끝났습니다</translation>
    </message>
    <message>
        <source>iteration {n:,}:</source>
        <translation>반복 {n:,}:</translation>
    </message>
</context>
<context>
    <name>ReportViews</name>
    <message>
        <source>Component planes</source>
        <translation>성분 평면</translation>
    </message>
</context>
<context>
    <name>RunController</name>
    <message>
        <source>stopped while starting</source>
        <extracomment>A run that keeps checkpoints writes one when it stops (Orbax&apos;s save: tenths of a second here; a slow disk: more).</extracomment>
        <translation>시작 중에 중지됨</translation>
    </message>
    <message>
        <source>stopped during compilation</source>
        <translation>컴파일 중에 중지됨</translation>
    </message>
    <message>
        <source>stopped after {n} iterations</source>
        <translation>반복 {n}회 후 중지됨</translation>
    </message>
</context>
<context>
    <name>RunPanel</name>
    <message>
        <source>width x height ({example}: 240 columns, 135 rows); {auto}: chosen for the data</source>
        <translation>너비 x 높이 ({example}: 240열, 135행); {auto}: 데이터에 맞춰 선택</translation>
    </message>
    <message>
        <source>Random colours</source>
        <translation>무작위 색상</translation>
    </message>
    <message>
        <source>File</source>
        <translation>파일</translation>
    </message>
    <message>
        <source>{formats}, examples x features</source>
        <translation>{formats}, 샘플 x 특성</translation>
    </message>
    <message>
        <source>Choose a {formats} file</source>
        <translation>{formats} 파일 선택</translation>
    </message>
    <message>
        <source>neighbourhood radius at the start, in grid units: one value or X,Y; empty for the default</source>
        <translation>시작 시 이웃 반경 (격자 단위): 값 하나 또는 X,Y; 비우면 기본값</translation>
    </message>
    <message>
        <source>neighbourhood radius at the end, in grid units: one value or X,Y; empty for the default</source>
        <translation>끝날 때 이웃 반경 (격자 단위): 값 하나 또는 X,Y; 비우면 기본값</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>자동</translation>
    </message>
    <message>
        <source>Radius σ</source>
        <translation>반경 σ</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>학습률</translation>
    </message>
    <message>
        <source>device mesh: devices along the data axis x along the map axis</source>
        <translation>장치 메시: 데이터 축 장치 수 x 지도 축 장치 수</translation>
    </message>
    <message>
        <source>simulate</source>
        <translation>가상</translation>
    </message>
    <message>
        <source>use JAX&apos;s CPU backend with this many simulated devices (set per run)</source>
        <translation>JAX의 CPU 백엔드를 이 개수의 가상 장치로 사용합니다 (실행마다 설정)</translation>
    </message>
    <message>
        <source>CPU devices</source>
        <translation>CPU 장치</translation>
    </message>
    <message>
        <source>Detect</source>
        <translation>감지</translation>
    </message>
    <message>
        <source>ask a short-lived worker process which devices JAX sees with these settings</source>
        <translation>이 설정에서 JAX가 어떤 장치를 보는지 잠깐 실행되는 워커 프로세스에 묻습니다</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>실행</translation>
    </message>
    <message>
        <source>Run this configuration ({shortcut})</source>
        <translation>이 설정으로 실행 ({shortcut})</translation>
    </message>
    <message>
        <source>batch training does not use a learning rate</source>
        <translation>배치 학습은 학습률을 쓰지 않습니다</translation>
    </message>
    <message>
        <source>{backend} · sharded over devices</source>
        <translation>{backend} · 여러 장치에 샤딩</translation>
    </message>
    <message>
        <source>{backend} · online (one example a step)</source>
        <translation>{backend} · 온라인 (스텝마다 샘플 하나)</translation>
    </message>
    <message>
        <source>{backend} · batch (all examples an epoch)</source>
        <translation>{backend} · 배치 (에폭마다 모든 샘플)</translation>
    </message>
    <message>
        <source>Data ({patterns});;All files (*)</source>
        <translation>데이터 ({patterns});;모든 파일 (*)</translation>
    </message>
    <message>
        <source>Training data</source>
        <translation>학습 데이터</translation>
    </message>
    <message>
        <source>Folder of training data</source>
        <translation>학습 데이터 폴더</translation>
    </message>
</context>
<context>
    <name>RunsModel</name>
    <message>
        <source>Tick runs to compare them; double-click a name to rename it</source>
        <translation>비교할 실행을 체크하세요. 이름을 더블클릭하면 바꿀 수 있습니다</translation>
    </message>
    <message>
        <source>The settings in which the ticked runs differ, each run&apos;s value</source>
        <translation>체크한 실행끼리 다른 설정과 실행마다의 값</translation>
    </message>
</context>
<context>
    <name>RunsPanel</name>
    <message>
        <source>Tick runs to compare them (the Compare page); double-click a name to rename it, another cell to show the run again</source>
        <translation>비교할 실행을 체크하세요(비교 페이지). 이름을 두 번 클릭하면 이름을 바꾸고, 다른 칸을 두 번 클릭하면 실행을 다시 봅니다</translation>
    </message>
    <message>
        <source>Cannot rename the run</source>
        <translation>실행 이름을 바꿀 수 없습니다</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>보기</translation>
    </message>
    <message>
        <source>Show the selected run again: its final map, timings and quality</source>
        <translation>선택한 실행을 다시 보여 줍니다: 최종 지도, 시간, 품질</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>삭제</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>저장…</translation>
    </message>
    <message>
        <source>Open…</source>
        <translation>열기…</translation>
    </message>
    <message>
        <source>Re-run</source>
        <translation>다시 실행</translation>
    </message>
    <message>
        <source>Run the selected run&apos;s configuration again</source>
        <translation>선택한 실행의 설정으로 다시 실행합니다</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>재개</translation>
    </message>
    <message>
        <source>Go on training the selected stopped run from its last checkpoint, to the map it would have reached</source>
        <translation>선택한 중지된 실행을 마지막 체크포인트부터 이어서 학습해, 중단 없이 얻었을 지도에 이릅니다</translation>
    </message>
    <message>
        <source>Remove the selected runs from the list and their files (Delete)</source>
        <translation>선택한 실행을 목록과 파일에서 삭제합니다 (Delete)</translation>
    </message>
    <message>
        <source>Select one run in the list, then choose {action} again.</source>
        <translation>목록에서 실행 하나를 선택한 뒤 {action}을(를) 다시 누르세요.</translation>
    </message>
    <message>
        <source>{error}
The run is listed until the app closes.</source>
        <translation>{error}
이 실행은 앱을 닫을 때까지만 목록에 남습니다.</translation>
    </message>
    <message>
        <source>Cannot keep the run</source>
        <translation>실행을 저장할 수 없습니다</translation>
    </message>
    <message>
        <source>Select the runs to remove first</source>
        <translation>먼저 삭제할 실행을 선택하세요</translation>
    </message>
    <message>
        <source>Remove the run “{name}” from the list?</source>
        <translation>실행 “{name}”을(를) 목록에서 삭제할까요?</translation>
    </message>
    <message>
        <source>Its saved files are deleted too (save the run first to keep a copy).</source>
        <translation>저장된 파일도 함께 삭제됩니다 (사본이 필요하면 먼저 실행을 저장하세요).</translation>
    </message>
    <message>
        <source>Remove {n} runs from the list?</source>
        <translation>실행 {n}개를 목록에서 삭제할까요?</translation>
    </message>
    <message>
        <source>Their saved files are deleted too (save a run first to keep a copy).</source>
        <translation>저장된 파일도 함께 삭제됩니다 (사본이 필요하면 먼저 실행을 저장하세요).</translation>
    </message>
    <message>
        <source>Remove runs</source>
        <translation>실행 삭제</translation>
    </message>
    <message>
        <source>Cannot remove the run</source>
        <translation>실행을 삭제할 수 없습니다</translation>
    </message>
    <message>
        <source>SOM Studio run</source>
        <translation>SOM Studio 실행</translation>
    </message>
    <message>
        <source>Save run</source>
        <translation>실행 저장</translation>
    </message>
    <message>
        <source>Cannot save the run</source>
        <translation>실행을 저장할 수 없습니다</translation>
    </message>
    <message>
        <source>Saved {name} to {path}</source>
        <translation>{name}을(를) {path}에 저장했습니다</translation>
    </message>
    <message>
        <source>No run has finished yet: run a configuration first ({shortcut}).</source>
        <translation>아직 끝난 실행이 없습니다. 먼저 설정을 실행하세요 ({shortcut}).</translation>
    </message>
    <message>
        <source>Nothing to export</source>
        <translation>내보낼 것이 없습니다</translation>
    </message>
    <message>
        <source>Export runs as JSON</source>
        <translation>실행을 JSON으로 내보내기</translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation>내보내기 실패</translation>
    </message>
    <message>
        <source>Wrote {n} run(s) to {path}</source>
        <translation>실행 {n}개를 {path}에 저장했습니다</translation>
    </message>
    <message>
        <source>Open runs</source>
        <translation>실행 열기</translation>
    </message>
    <message>
        <source>Cannot open the run</source>
        <translation>실행을 열 수 없습니다</translation>
    </message>
    <message>
        <source>{name} is already in the list</source>
        <translation>{name}은(는) 이미 목록에 있습니다</translation>
    </message>
    <message>
        <source>Its saved configuration is not valid: {error}</source>
        <translation>저장된 설정이 올바르지 않습니다: {error}</translation>
    </message>
    <message>
        <source>Cannot re-run</source>
        <translation>다시 실행할 수 없습니다</translation>
    </message>
    <message>
        <source>Cannot resume</source>
        <translation>재개할 수 없음</translation>
    </message>
    <message>
        <source>This run has no checkpoint to go on from: it ended, stopped before its first one, or a later run went on from it.</source>
        <translation>이어서 학습할 체크포인트가 없습니다: 실행이 끝났거나, 첫 체크포인트 전에 멈췄거나, 나중 실행이 이미 이어서 학습했습니다.</translation>
    </message>
</context>
<context>
    <name>SettingControls</name>
    <message>
        <source>none</source>
        <translation>없음</translation>
    </message>
</context>
<context>
    <name>Settings</name>
    <message>
        <source>{file}: the settings file is damaged; SOM Studio starts with its defaults</source>
        <extracomment>A file written by a newer SOM Studio is read (every value is validated) but never written.</extracomment>
        <translation>{file}: 설정 파일이 손상되었습니다. SOM Studio를 기본 설정으로 시작합니다</translation>
    </message>
    <message>
        <source>{file}: the settings file cannot be read; SOM Studio starts with its defaults</source>
        <translation>{file}: 설정 파일을 읽을 수 없습니다. SOM Studio를 기본 설정으로 시작합니다</translation>
    </message>
    <message>
        <source>{file}: written by a newer SOM Studio (settings version {version}, this one reads {reads}); what this version understands is used, and the file is left as it is</source>
        <translation>{file}: 더 새로운 SOM Studio가 쓴 파일입니다 (설정 버전 {version}, 이 버전은 {reads}까지 읽음). 이 버전이 이해하는 설정만 쓰고, 파일은 그대로 둡니다</translation>
    </message>
</context>
<context>
    <name>ShardingView</name>
    <message>
        <source>Choose a valid configuration to see its layout.</source>
        <translation>장치 배치를 보려면 올바른 설정을 고르세요.</translation>
    </message>
    <message>
        <source>{impl} does not shard: it runs on the first device (layout {layout})</source>
        <translation>{impl}은(는) 샤딩하지 않습니다: 첫 번째 장치에서 실행됩니다 (배치 {layout})</translation>
    </message>
    <message>
        <source>device {id}: {bytes}</source>
        <translation>장치 {id}: {bytes}</translation>
    </message>
    <message>
        <source>(memory {used} / {limit})</source>
        <translation>(메모리 {used} / {limit})</translation>
    </message>
    <message>
        <source>map {shape}: rows split over &apos;{axis}&apos;</source>
        <translation>지도 {shape}: 행을 &apos;{axis}&apos; 축으로 분할</translation>
    </message>
    <message>
        <source>{n} copies</source>
        <translation>복제 {n}개</translation>
    </message>
    <message>
        <source>data {shape} over &apos;{axis}&apos;</source>
        <translation>데이터 {shape}: &apos;{axis}&apos; 축으로 분할</translation>
    </message>
    <message>
        <source>bytes per device hold: {arrays}</source>
        <translation>장치별 바이트에 포함: {arrays}</translation>
    </message>
    <message>
        <source>map {shape}: whole</source>
        <translation>지도 {shape}: 전체</translation>
    </message>
    <message>
        <source>map</source>
        <translation>지도</translation>
    </message>
    <message>
        <source>data</source>
        <translation>데이터</translation>
    </message>
    <message>
        <source>sums</source>
        <translation>합계</translation>
    </message>
</context>
<context>
    <name>SweepView</name>
    <message>
        <source>Values separated by commas; a radius may be SXxSY per axis. Empty: not varied.</source>
        <extracomment>How far the sweep in progress is, 0 to 1 (the window&apos;s progress bar shows it).</extracomment>
        <translation>쉼표로 구분한 값. 반경은 축마다 다르게 줄 수 있습니다(가로x세로). 비워 두면 바꾸지 않습니다.</translation>
    </message>
    <message>
        <source>Train together</source>
        <translation>함께 학습</translation>
    </message>
    <message>
        <source>Type the values to try, then press Train together: every combination of them trains as one program on the form&apos;s data and map, with {impl}&apos;s batch epochs whichever implementation the form names, and each map appears here as a point, its quantization error against its topographic error.</source>
        <translation>시험할 값을 입력하고 함께 학습을 누르십시오. 값의 모든 조합이 실행 패널의 데이터와 지도로 한 프로그램에서 학습되고(실행 패널의 구현과 관계없이 {impl}의 배치 에포크로), 각 지도가 여기에 양자화 오차 대 위상 오차의 점으로 나타납니다.</translation>
    </message>
    <message>
        <source>quantization error</source>
        <translation>양자화 오차</translation>
    </message>
    <message>
        <source>topographic error</source>
        <translation>위상 오차</translation>
    </message>
    <message>
        <source>Click a point to see its map</source>
        <translation>점을 누르면 그 지도를 봅니다</translation>
    </message>
    <message>
        <source>Keep as a run</source>
        <translation>실행으로 보관</translation>
    </message>
    <message>
        <source>Type the values of at least one setting to vary</source>
        <translation>바꿀 설정을 적어도 하나 입력하십시오</translation>
    </message>
    <message>
        <source>The Run panel&apos;s settings are refused: the sweep trains its SOM; fix them there first</source>
        <translation>실행 패널의 설정이 거부되었습니다. 스윕은 그 SOM을 학습하니 먼저 그곳에서 고치십시오</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>중지</translation>
    </message>
    <message>
        <source>Training the maps together…</source>
        <translation>지도를 함께 학습하는 중…</translation>
    </message>
    <message>
        <source>The sweep failed: {message}</source>
        <translation>스윕 실패: {message}</translation>
    </message>
    <message>
        <source>The sweep was stopped: {message}</source>
        <translation>스윕을 중지했습니다: {message}</translation>
    </message>
    <message>
        <source>{n} maps trained together</source>
        <translation>지도 {n}개를 함께 학습했습니다</translation>
    </message>
    <message>
        <source>{n} maps trained together in {wall} (compile {compile}); the orange points are the frontier</source>
        <translation>지도 {n}개를 함께 {wall}에 학습 (컴파일 {compile}). 주황색 점이 경계선입니다</translation>
    </message>
    <message>
        <source>, label purity {p:.3f}</source>
        <translation>, 레이블 순도 {p:.3f}</translation>
    </message>
    <message>
        <source>Kept as a run: {name}</source>
        <translation>실행으로 보관함: {name}</translation>
    </message>
</context>
<context>
    <name>TableFields</name>
    <message>
        <source>pca for a data file, random for random colours (as the CLI)</source>
        <translation>데이터 파일이면 pca, 무작위 색상이면 random (CLI와 같음)</translation>
    </message>
    <message>
        <source>each feature uniform between its smallest and largest value</source>
        <translation>각 특성을 최솟값과 최댓값 사이에서 균등하게</translation>
    </message>
    <message>
        <source>the map spans the first two principal components (the SOM Toolbox&apos;s lininit)</source>
        <translation>지도가 처음 두 주성분을 따라 펼쳐집니다 (SOM Toolbox의 lininit)</translation>
    </message>
    <message>
        <source>each unit starts at a random example</source>
        <translation>각 유닛이 무작위 샘플에서 시작합니다</translation>
    </message>
    <message>
        <source>{rect}: 4 neighbours in a square grid; {hex}: 6 in offset rows</source>
        <translation>{rect}: 사각 격자에서 이웃 4개; {hex}: 어긋난 행에서 이웃 6개</translation>
    </message>
    <message>
        <source>distances wrap around both axes (a hex toroid needs an even height)</source>
        <translation>거리가 두 축 모두에서 반대편으로 이어집니다 (육각형 토로이드는 높이가 짝수여야 합니다)</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>자동</translation>
    </message>
    <message>
        <source>each feature of the file: {minmax} to [0, 1]; {zscore} to mean 0, sd 1</source>
        <translation>파일의 각 특성: {minmax}는 [0, 1]로, {zscore}는 평균 0, 표준편차 1로</translation>
    </message>
    <message>
        <source>the column holding each row&apos;s label (shown on the map, and its purity)</source>
        <translation>각 행의 레이블이 든 열 (지도에 레이블과 순도를 표시)</translation>
    </message>
    <message>
        <source>a column carried through to projections of new data</source>
        <translation>새 데이터를 투영할 때 함께 넘겨주는 열</translation>
    </message>
    <message>
        <source>columns of the file left out of training</source>
        <translation>학습에서 뺄 파일의 열</translation>
    </message>
    <message>
        <source>none</source>
        <translation>없음</translation>
    </message>
    <message>
        <source>k-means clusters of the trained codebook; 0: no clusters</source>
        <translation>학습된 코드북의 k-means 클러스터 수; 0: 클러스터 없음</translation>
    </message>
    <message>
        <source>left out of training: {columns}</source>
        <translation>학습에서 제외: {columns}</translation>
    </message>
</context>
<context>
    <name>TimingPlot</name>
    <message>
        <source>No run yet</source>
        <extracomment>The share of one core the live curve&apos;s redraws may take (the data set and the plot painted, in the process&apos;s CPU time): on a machine whose cores all train, the app&apos;s CPU time is the training&apos;s.</extracomment>
        <translation>아직 실행 없음</translation>
    </message>
    <message>
        <source>log scale</source>
        <translation>로그 스케일</translation>
    </message>
    <message>
        <source>iteration</source>
        <translation>반복</translation>
    </message>
    <message>
        <source>time per iteration</source>
        <translation>반복당 시간</translation>
    </message>
    <message>
        <source>per chunk</source>
        <translation>청크별</translation>
    </message>
    <message>
        <source>rolling median</source>
        <translation>이동 중앙값</translation>
    </message>
    <message>
        <source>rolling median ({n})</source>
        <translation>이동 중앙값 ({n})</translation>
    </message>
    <message>
        <source>compiling and warming up…</source>
        <translation>컴파일 및 워밍업 중…</translation>
    </message>
    <message>
        <source>warming up…</source>
        <translation>워밍업 중…</translation>
    </message>
    <message>
        <source>warm-up {time}</source>
        <translation>워밍업 {time}</translation>
    </message>
    <message>
        <source>compile + warm-up {time}</source>
        <translation>컴파일 + 워밍업 {time}</translation>
    </message>
    <message>
        <source>median {time}/iteration</source>
        <translation>중앙값 {time}/반복</translation>
    </message>
    <message>
        <source>{rate} samples/s</source>
        <translation>{rate} 표본/s</translation>
    </message>
    <message>
        <source>mean {time}/iteration</source>
        <translation>평균 {time}/반복</translation>
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
        <source>Examples by id ({n})</source>
        <translation>ID로 본 예제 ({n})</translation>
    </message>
    <message>
        <source>Example data rows ({n}; the first is 1)</source>
        <translation>예제 데이터 행 ({n}, 첫 행이 1)</translation>
    </message>
</context>
<context>
    <name>UserImplementations</name>
    <message>
        <source>Add implementation</source>
        <translation>구현 추가</translation>
    </message>
    <message>
        <source>Python files (*.py)</source>
        <translation>Python 파일 (*.py)</translation>
    </message>
    <message>
        <source>The class in {file} to run:</source>
        <translation>{file}에서 실행할 클래스:</translation>
    </message>
    <message>
        <source>Cannot add the implementation</source>
        <translation>구현을 추가할 수 없습니다</translation>
    </message>
</context>
<context>
    <name>ViewBox</name>
    <message>
        <source>ViewBox options</source>
        <translation>ViewBox 옵션</translation>
    </message>
    <message>
        <source>View All</source>
        <translation>전체 보기</translation>
    </message>
    <message>
        <source>axis</source>
        <translation>축</translation>
    </message>
    <message>
        <source>Mouse Mode</source>
        <translation>마우스 모드</translation>
    </message>
    <message>
        <source>3 button</source>
        <translation>버튼 3개</translation>
    </message>
    <message>
        <source>1 button</source>
        <translation>버튼 1개</translation>
    </message>
</context>
</TS>
