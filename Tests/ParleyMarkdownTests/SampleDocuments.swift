/// Realistic model replies for the streaming tests. `lateDefinitions` marks a document where a
/// definition follows its use, the only case where `finish()` may patch a committed block.
struct SampleDocument {
    let name: String
    let text: String
    let lateDefinitions: Bool
}

enum SampleDocuments {
    static let all: [SampleDocument] = [
        SampleDocument(name: "headings and lists", text: """
            # Getting started

            Install the *package* and **run** it:

            1. Download the archive
            2. Unpack it
               - on Linux: `tar xf`
               - on macOS: double-click

                 with a second paragraph
            3. Run `./setup`

            ## Next steps
            Setext follows
            ==============

            * a
            * b
            + c

            Final words.

            """, lateDefinitions: false),
        SampleDocument(name: "code fences", text: """
            Here is code:

            ```swift
            let x = [1, 2, 3]
            print(x[0])
            ```

            ~~~python
            def f():
                return {"a": 1}
            ~~~

            ````
            ```
            nested fence
            ```
            ````

                indented code
                more

            After the code.
            ```js
            // never closed
            console.log("[x]")

            """, lateDefinitions: false),
        SampleDocument(name: "tables", text: """
            | Name | Value | Note |
            |:-----|:-----:|-----:|
            | a | 1 | *x* |
            | b | 2 | `y` |
            text right after
            a line
            | h1 | h2 |
            | -- | -- |
            | c1 | c2 |

            | solo |
            |------|

            """, lateDefinitions: false),
        SampleDocument(name: "blockquotes and lazy continuation", text: """
            > A quote
            lazy continuation
            > back in
            #not a heading

            > second quote
            > - with a list
            continued lazily

            > > nested
            > > quote
            > back

            """, lateDefinitions: false),
        SampleDocument(name: "early reference definitions", text: """
            [docs]: https://example.com/docs "Docs"
            > [quoted]: https://example.com/q

            See [the docs][docs] and [quoted].

            - item [docs]
            - [list def]: https://example.com/l

            Use [list def] now.

            """, lateDefinitions: false),
        SampleDocument(name: "late reference definitions", text: """
            See [the docs][docs] first.

            Another paragraph.

            - A list with [later]

            Closing words.

            [docs]: https://example.com/docs
            [later]: https://example.com/later

            """, lateDefinitions: true),
        SampleDocument(name: "footnotes", text: """
            A claim[^1] and another[^note].

            More text.

            Repeat[^1].

            [^1]: The first source.
            [^note]: A longer note
                with a second line.

            """, lateDefinitions: true),
        SampleDocument(name: "html blocks", text: """
            <div class="x">
            <script>alert(1)</script>
            </div>

            Text with <b>inline</b> html and <img src=x onerror=alert(1)>.

            <!-- a comment
            spanning lines -->
            after comment

            <pre>
            keep
            </pre>

            """, lateDefinitions: false),
        SampleDocument(name: "setext and thematic breaks", text: """
            A paragraph
            that becomes a heading
            ---

            Another
            ===

            ---
            ***
            Paragraph then break

            - - -
            Foo
            bar
            ---
            baz

            """, lateDefinitions: false),
        SampleDocument(name: "task lists and emphasis", text: """
            - [ ] open task
            - [x] done task
              with *emphasis
              across lines*

            Some **bold
            across** lines and ~~strike~~ and www.example.com and https://example.org/x.

            """, lateDefinitions: false),
        SampleDocument(name: "CRLF line endings", text:
            "# Title\r\n\r\nLine one\r\nline two\r\n\r\n- a\r\n- b\r\n\r\n```\r\ncode\r\n```\r\n\r\n> q\r\nlazy\r\n",
            lateDefinitions: false),
        SampleDocument(name: "multi-byte UTF-8", text: """
            # 日本語の見出し 🎉

            Emoji 👩‍👩‍👧‍👦 and flags 🇫🇷🇩🇪 in *text*.

            - 中文 item
            - café ñ

            | 列 | 🚀 |
            |----|----|
            | 値 | ✓ |

            > 引用 with é
            continuación

            """, lateDefinitions: false),
        SampleDocument(name: "no trailing newline", text: "Intro\n\n```\nunterminated code", lateDefinitions: false),
    ]
}
